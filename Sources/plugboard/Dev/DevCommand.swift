import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard
import PlugboardDev
import PlugboardHost

/// `plugboard dev PACKAGE_DIR`: the hot-reload dev loop.
enum DevCommand: CLICommand {
    static let spec = CommandSpec(
        name: "dev",
        abstract: "Build a plugin package, load it, and hot-reload it on every save.",
        discussion: """
        Builds the package with `swift build`, loads its plugin into a host (with the plugins of \
        --plugins), runs one of its commands to show its output, then watches the package's sources \
        (inotify; --poll to poll). On each save: incremental build, verification in a child process, \
        load as a new generation with the old one's state, switch; one line per save with the time \
        of each phase. A compile error, a rejected build, or a new generation that throws or crashes \
        never replaces the running version. With --json, one JSON object per line on stdout (event: \
        ready, build-started, build-failed, rejected, rolled-back, reloaded, plan, planned) and human \
        lines on stderr. A reload of a plugin that others require (docs/dependencies.md) first prints \
        its plan: they stop, newest first, and start again on the new build with their state; \
        --dry-run prints the plan of each save and reloads nothing. SIGUSR1 prints a status snapshot of \
        every plugin (`status` event: generation, content hash, isolation, calls); SIGHUP looks at --plugins \
        again (`refreshed` event: files added, reloaded, removed; install with `plugboard install`). Stop with Ctrl-C. Exits 0 when stopped, 1 if the package cannot be used, 64 on wrong usage.
        """,
        options: [
            .init(long: "--plugins", short: "-p", valueName: "dir", help: "Other plugins to load beside it."),
            PluginsOption.config,
            .init(long: "--data", valueName: "dir", help: "Data directory for plugin storage (default: PACKAGE/.build/plugboard-data)."),
            .init(long: "--run", valueName: "command", help: "Command and arguments (split on spaces) to run after each load, e.g. \"greet Ada\"; default: the plugin's first command."),
            .init(long: "--poll", help: "Poll for changes instead of using inotify."),
            PluginsOption.allowUnsafe,
            .init(long: "--isolate-all", help: "Run the plugin (and the others) in a child process of its own: a crash or hang of a command costs that command; each reload starts a new child (docs/isolation.md)."),
            .init(long: "--dry-run", help: "After the first load, verify each new build and print what a reload would do (which plugins stop and start again), without reloading."),
            CommandSpec.json,
        ],
        positionals: [.init(name: "package-dir", help: "Directory of the plugin package (its Package.swift).")])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let builder: PackageBuilder
        do {
            builder = try PackageBuilder(packageDirectory: arguments.positionals[0])
        } catch {
            Terminal.error("\(Terminal.safe(error.description)) [\(error.code)]")
            return ExitStatus.failure
        }
        let session = DevSession(
            builder: builder, json: arguments.flag("--json"),
            pluginsDirectory: arguments.value("--plugins"),
            settings: arguments.value("--config").map(HostSettings.load(from:)) ?? HostSettings(),
            dataDirectory: arguments.value("--data") ?? builder.packageDirectory + "/.build/plugboard-data",
            command: arguments.value("--run").map { $0.split(separator: " ").map(String.init) },
            polling: arguments.flag("--poll"), trust: PluginsOption.trust(arguments), isolated: arguments.flag("--isolate-all"),
            dryRun: arguments.flag("--dry-run"))
        return session.run()
    }
}
