import Plugboard
import PlugboardCore
import PlugboardRegistry
import PlugboardCatalog

/// What the `plugboard` tool and the benchmark need of a host beyond its
/// public verbs (package access: not a host author's API).
extension PluginHost {
    /// Discovers and activates `file`, and starts a scanner process ahead of
    /// its first reload's verification (each reload starts the next one
    /// itself): what the dev loop and the reload benchmark begin with.
    package func load(reloadable file: String) -> PluginRecord {
        defer { lifecycle.spareScanner.fill(lifecycle.scanner) }
        let records = discover(files: [file])
        activate(pluginIDs: Set(records.filter { $0.status == .available }.compactMap(\.id)))
        return current(records)[0]
    }

    /// The latest record of each of `records`' files (after an activation).
    package func current(_ records: [PluginRecord]) -> [PluginRecord] { lifecycle.withIsolation(lifecycle.current(records)) }

    /// The interface libraries admitted or refused so far (`plugboard lock` records them).
    package var interfaceLibraries: [InterfaceLibrary] { catalog.interfaceLibraries }

    /// Makes isolated plugin `id`'s spare child now if it has none (the
    /// benchmark times restarts from it); its pid, nil when it is not isolated.
    package func keepSpareChild(of id: String) -> Int32? {
        guard let plugin = lifecycle.livePlugin(id)?.isolated else { return nil }
        plugin.keepSpare(waiting: true)
        return plugin.spare.withLock { $0.child?.pid }
    }

    /// Waits (up to 10 s) until the spare scanner a reload asked for is
    /// ready: the benchmark's stand-in for a dev loop's pause between builds.
    package func awaitSpareScanner() {
        lifecycle.spareScanner.awaitReady(until: .now + .seconds(10))
    }

    /// Whether isolated plugin `id` keeps a spare child after a crash (the
    /// benchmark times restarts without one too); the spare it has goes.
    package func keepsSpareChildren(_ keeps: Bool, of id: String) {
        guard let plugin = lifecycle.livePlugin(id)?.isolated else { return }
        plugin.sparesAllowed.store(keeps, ordering: .releasing)
        if !keeps { plugin.discardSpare() }
    }

    /// Admits `directory`'s `lib/` interface libraries, so a file checked
    /// before it is put there (`plugboard install`) finds the libraries it
    /// will find once installed.
    package func installInterfaceLibraries(of directory: String) -> [InterfaceLibrary] {
        catalog.installInterfaceLibraries(from: directory)
    }

    /// `plugboard dev` loaded a rebuilt plugin file: no lock or signature vouches for it.
    package func taintDevBuild(_ path: String) {
        taintState.mark(HostTaint.devBuildLoaded, "plugboard dev loaded a rebuilt plugin file during its session (\(path))")
    }

    /// The command providers (`plugboard.command`) that may answer to
    /// `name`, after activating only those: the available plugins that
    /// declare `command:NAME`, and those that declare no `command:` trigger
    /// at all (their commands' names are known only once active). A plugin
    /// that declares command triggers declares all its commands, so
    /// `plugboard run greet` skips a plugin that declared only `command:bench`.
    package func commandProviders(named name: String) -> [RegisteredProvider] { lifecycle.commandProviders(named: name) }

    /// Commands among `registrations` whose plugin declares `command:`
    /// triggers but not theirs: `commandProviders(named:)` skips such a
    /// plugin for that name while it is not active.
    package func undeclaredCommands(among registrations: [RegisteredProvider]) -> [(pluginID: String, name: String, declared: [String])] {
        lifecycle.undeclaredCommands(among: registrations)
    }
}
