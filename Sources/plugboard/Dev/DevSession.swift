import PlugboardCommandLine
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard
import PlugboardDev
import PlugboardDemo
import PlugboardHost

/// One `plugboard dev` session: build, load, watch, rebuild, reload.
final class DevSession: @unchecked Sendable {
    // @unchecked: all state is used from the session's own thread; the
    // signal handlers only call `watcher.stop()`, `host.snapshot()` and
    // `host.refresh()`, which are thread-safe, and read `json`, a constant.
    let builder: PackageBuilder
    let json: Bool
    let host: PluginHost
    let command: [String]?
    let watcher: SourceWatcher
    /// Plan each reload without doing it (--dry-run).
    let dryRun: Bool
    var pluginID: String?
    var generation = 0
    /// Bytes mapped by generations this session retired: Swift images are
    /// never unloaded, so this only grows until the session ends.
    var retiredBytes = 0
    /// A notice each time the retired images pass another step of this.
    static let memoryNoticeStep = 64 << 20
    private var signalSources: [any DispatchSourceSignal] = []

    init(builder: PackageBuilder, json: Bool, pluginsDirectory: String?, settings: HostSettings,
         dataDirectory: String, command: [String]?, polling: Bool, trust: DirectoryTrust, isolated: Bool = false, dryRun: Bool = false) {
        self.builder = builder
        self.dryRun = dryRun
        self.json = json
        self.command = command
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: pluginsDirectory, settings: settings, dataDirectory: dataDirectory,
            logSink: LogSink { Terminal.writeErr("  log \($0.level) [\(Terminal.safe($0.label))] \(Terminal.safe($0.message))\n") }, trust: trust)
        if isolated { configuration.isolation.others = .isolated }
        configuration.observability.diagnosticSink = { diagnostic in
            guard diagnostic.code == "plugin-output" else { return }
            Terminal.writeErr("  output [\(Terminal.safe(diagnostic.plugin ?? "plugin"))] \(diagnostic.message)\n")
        }
        host = PluginHost(configuration: configuration)
        host.declareDemoExtensionPoints()
        watcher = SourceWatcher(root: builder.packageDirectory, polling: polling)
    }

    func run() -> Int32 {
        stopOnSignals()
        statusOnSignal()
        refreshOnSignal()
        if let directory = host.configuration.pluginsDirectory {
            do {
                let discovered = try host.discover()
                host.activateAll()
                for record in host.current(discovered) where record.status != .active {
                    Terminal.writeErr(Terminal.style("warning:", .yellow, stderr: true) + " \(Terminal.safe(record.error?.message ?? record.path)) [\(record.code ?? "")]\n")
                }
            } catch {
                Terminal.error("\(Terminal.safe(error.description)) (--plugins \(Terminal.safe(directory)))")
                return ExitStatus.failure
            }
        }
        info("watching \(builder.packageDirectory) (\(watcher.mode)); product lib\(builder.product).so; Ctrl-C to stop")
        var detect: Double?
        var changed: [String]?
        var buildStart: Date?
        var lastSave: Date?
        repeat {
            var started = DevEvent("build-started", id: pluginID, generation: live)
            started.changed = changed
            if let detect { started.ms = ["detect": detect] }
            emit(started)
            if let changed { lastSave = builder.forgetIncrementalStateIfTooRecent(changed, previousBuildStart: buildStart, previousSave: lastSave) }
            buildStart = Date()
            let build = builder.build()
            if watcher.isStopped { break }
            var ms = ["build": build.milliseconds]
            if let detect { ms["detect"] = detect }
            // Saved again while it built: this build may hold a state the
            // author already replaced. Build the newest instead; this one is
            // neither reported as failed nor loaded.
            if let newer = watcher.pendingChange() {
                var superseded = DevEvent("build-superseded", id: pluginID, generation: live)
                superseded.ms = ms
                superseded.changed = newer.paths
                emit(superseded)
                detect = newer.detectMilliseconds
                changed = newer.paths
                continue
            }
            if !build.succeeded {
                var failed = DevEvent("build-failed", id: pluginID, generation: live)
                failed.ms = ms
                failed.diagnostics = build.diagnostics.isEmpty ? Array(build.output.split(separator: "\n").suffix(10).map(String.init)) : build.diagnostics
                failed.output = runCommand()
                emit(failed)
            } else if pluginID == nil {
                firstLoad(ms)
            } else {
                reload(ms)
            }
            guard let change = watcher.waitForChange() else { break }
            detect = change.detectMilliseconds
            changed = change.paths
        } while true
        info("stopping")
        host.shutdown()
        return ExitStatus.success
    }

    private var live: Int? { generation > 0 ? generation : nil }

    private func firstLoad(_ timings: [String: Double]) {
        var ms = timings
        let start = ContinuousClock.now
        let record = host.load(reloadable: builder.libraryPath)
        ms["load"] = start.millisecondsElapsed
        guard record.status == .active, let id = record.id else {
            var event = DevEvent(record.status == .failed ? "rolled-back" : "rejected", id: record.id)
            event.ms = ms
            event.code = record.code
            event.reason = record.reason
            emit(event)
            return
        }
        pluginID = id
        generation = 1
        loadDependents()
        var ready = DevEvent("ready", id: id, generation: 1)
        ready.ms = ms
        ready.output = runCommand()
        emit(ready)
    }

    /// Plugins of --plugins that require the one being developed were
    /// refused before it loaded: look at them again now that it runs.
    private func loadDependents() {
        guard host.configuration.pluginsDirectory != nil,
              host.records.contains(where: { $0.code == "dependency-missing" || $0.code == "dependency-rejected" }),
              let records = try? host.discover() else { return }
        host.activateAll()
        for record in host.current(records) where record.status == .active && record.requires.contains(where: { $0.id == pluginID }) {
            info("\(Terminal.safe(record.id ?? record.path)) runs on \(Terminal.safe(pluginID ?? ""))")
        }
    }

    /// With --dry-run: what a reload of this build would do, without doing it.
    private func plan(_ timings: [String: Double]) {
        guard let id = pluginID else { return }
        let plan = host.planReload(id, from: builder.libraryPath, verification: .loadAndActivate)
        var event = DevEvent("planned", id: id, generation: live)
        event.ms = timings
        event.steps = plan.steps
        if let rejection = plan.rejection {
            event.code = rejection.code.rawValue
            event.reason = rejection.reason
        }
        emit(event)
    }

    private func reload(_ timings: [String: Double]) {
        guard let id = pluginID else { return }
        guard !dryRun else { return plan(timings) }
        let outcome = host.reload(id, from: builder.libraryPath, verification: .loadAndActivate) { plan in
            // Shown before it acts, when it touches other plugins.
            guard plan.cascades else { return }
            var event = DevEvent("plan", id: id, generation: live)
            event.steps = plan.steps
            emit(event)
        }
        var ms = timings
        ms["verify"] = outcome.timings.verify
        ms["load"] = outcome.timings.load
        if case .reloaded = outcome.result { ms["switch"] = outcome.timings.switch }
        generation = outcome.generation
        var event: DevEvent
        switch outcome.result {
        case .reloaded:
            // A rebuilt file no lock or signature vouches for.
            host.taintDevBuild(builder.libraryPath)
            event = DevEvent("reloaded", id: id, generation: generation)
            event.memoryBytes = outcome.addedMemory
            let before = retiredBytes / Self.memoryNoticeStep
            retiredBytes += outcome.addedMemory
            if retiredBytes / Self.memoryNoticeStep > before {
                info("\(generation) generations keep \(retiredBytes >> 20) MiB mapped (Swift images are never unloaded); "
                     + "restart plugboard dev to return it")
            }
        case let .rejected(error):
            event = DevEvent("rejected", id: id, generation: generation)
            event.code = error.code.rawValue
            event.reason = error.reason
        case let .rolledBack(error):
            event = DevEvent("rolled-back", id: id, generation: generation)
            event.code = error.code.rawValue
            event.reason = error.reason
        }
        event.ms = ms
        event.state = outcome.stateNote
        if !outcome.dependents.isEmpty {
            event.steps = outcome.dependents.map { dependent in
                if let error = dependent.error { return "\(dependent.pluginID) stopped [\(error.code.rawValue)] \(error.reason)" }
                return "\(dependent.pluginID) gen \(dependent.generation)" + (dependent.stateNote.map { " (\($0))" } ?? "")
            }
        }
        event.output = runCommand()
        emit(event)
    }

    /// Runs the chosen command on whatever generation is live.
    private func runCommand() -> String? {
        guard let id = pluginID else { return nil }
        let commands = host.registry.registrations(for: Commands.interface.id)
            .filter { $0.pluginID == id }.compactMap { $0.provider as? any Command }
        let name = command?.first
        guard let chosen = name.map({ name in commands.first { $0.name == name } }) ?? commands.first else { return nil }
        do {
            return try chosen.run(arguments: Array((command ?? []).dropFirst()))
        } catch {
            return "error: \(error)"
        }
    }

    private func emit(_ event: DevEvent) {
        if json {
            JSONOutput.line(event)
            Terminal.writeErr(event.humanText + "\n")
        } else {
            Terminal.write(event.humanText + "\n")
        }
    }

    private func info(_ message: String) {
        let line = Terminal.style("plugboard dev: ", .bold, stderr: json) + message + "\n"
        json ? Terminal.writeErr(line) : Terminal.write(line)
    }

    /// SIGHUP looks at --plugins again (`PluginHost.refresh()`: new files
    /// added, changed ones reloaded, removed ones retired): a `refreshed` event.
    private func refreshOnSignal() {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler { [self] in
            guard host.configuration.pluginsDirectory != nil else { return }
            var event = DevEvent("refreshed")
            do {
                let outcome = try host.refresh()
                event.steps = outcome.added.map { "added \($0.id ?? $0.path) (\($0.status.rawValue)\($0.code.map { ": \($0)" } ?? ""))" }
                    + outcome.reloaded.map { "reloaded \($0.pluginID): " + ($0.error.map { "[\($0.code.rawValue)] \($0.reason)" } ?? "generation \($0.generation)") }
                    + outcome.removed.map { "removed \($0)" }
            } catch {
                event.code = "plugins-directory-unreadable"
                event.reason = "\(error)"
            }
            emit(event)
        }
        source.resume()
        signalSources.append(source)
    }

    /// SIGUSR1 prints a status snapshot of every plugin (`status` event).
    private func statusOnSignal() {
        signal(SIGUSR1, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
        source.setEventHandler { [self] in
            // Only the host (thread-safe) is read here: the session's own
            // fields belong to its thread.
            var event = DevEvent("status")
            event.plugins = host.snapshot()
            event.taint = host.taint
            emit(event)
        }
        source.resume()
        signalSources.append(source)
    }

    private func stopOnSignals() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [watcher, host] in
                // This tool handles the signal itself: the journal hears of it
                // (a plugin hung past the threshold is blamed next start).
                host.interrupted(signal: number)
                watcher.stop()
                PackageBuilder.cancelRunningBuild()
            }
            source.resume()
            signalSources.append(source)
        }
    }
}
