import Foundation
@_spi(PlugboardHost) import Plugboard

/// How much of a new build a reload runs in a scanner process before the
/// host loads it.
public enum ReloadVerification: Sendable {
    /// Load it (its constructors, its entry point, its descriptor), as any new file is scanned.
    case load
    /// Also create, activate and deactivate a throwaway instance, with scratch
    /// storage and the host's settings file: a build that crashes in `init`
    /// or `activate` costs the scanner, not the host. What a dev loop uses.
    case loadAndActivate
}

extension Lifecycle {
    /// See ``PluginHost/reload(_:from:verification:)``.
    func reload(_ pluginID: String, from file: String, verification: ReloadVerification) -> ReloadOutcome {
        serial.withLock { _ in reloadSerially(pluginID, from: PluginDirectory.absolutePath(file), verification: verification) }
    }

    private func reloadSerially(_ id: String, from file: String, verification: ReloadVerification) -> ReloadOutcome {
        var timings = ReloadOutcome.Timings()
        var clock = ContinuousClock.now
        func lap() -> Double {
            let now = ContinuousClock.now
            defer { clock = now }
            return (now - clock).milliseconds
        }
        guard let old = live.withLock({ $0.first { $0.id == id } }) else {
            return ReloadOutcome(pluginID: id, result: .rejected(.notLoaded(path: file, id: id)), generation: 0,
                                 timings: timings, stateNote: nil, addedMemory: 0)
        }
        func outcome(_ result: ReloadOutcome.Result, generation: Int? = nil, note: String? = nil, memory: Int = 0) -> ReloadOutcome {
            ReloadOutcome(pluginID: id, result: result, generation: generation ?? old.generation,
                          timings: timings, stateNote: note, addedMemory: memory)
        }

        // Admitted like any file (trust, one read, static checks, lock,
        // copy), verified in a scanner process, then its copy loaded: what
        // is checked is exactly what is loaded.
        let next = old.generation + 1
        var ownership = OwnershipCheck()
        let build: CheckedImage
        switch admission.admit(PluginDirectory.candidate(at: file), label: "\(id)-gen\(next).so", ownership: &ownership) {
        case let .success(checked): build = checked
        case let .failure(refusal): return outcome(.rejected(refusal.error))
        }
        var record = PluginRecord(path: file, resolvedPath: build.readPath)
        record.file = build.details
        record.sha256 = build.sha256
        let verified = verify(build, verification: verification)
        timings.verify = lap()
        let image: LoadableImage
        switch verified {
        case let .failure(error): return outcome(.rejected(error))
        case let .success(scan):
            guard scan.id == id else { return outcome(.rejected(.reloadIDMismatch(path: file, expected: id, found: scan.id))) }
            switch admission.join(build, with: scan, from: .thisImage) {
            case let .success(joined): image = joined
            case let .failure(error): return outcome(.rejected(error))
            }
        }
        record.describe(image.scan)
        guard catalog.checkInterfaces(image.scan, &record) else { return outcome(.rejected(record.error!)) }

        // Until the switch, events and routes reach the old generation only.
        let staged = ServiceOwner(pluginID: id, generation: next)
        services.stage(staged)
        defer { services.unstage(staged) }
        let started: Result<(live: LivePlugin, note: String?, memory: Int), PluginLoadError>
        if let isolation = isolation(of: id) {
            started = reloadIsolated(old, image, isolation: isolation, generation: next)
        } else {
            started = reloadInProcess(old, image, build: build, file: file, generation: next)
        }
        let live: LivePlugin
        let note: String?
        let memory: Int
        switch started {
        case let .success(success):
            var started = success.live
            started.identity = build.identity
            (live, note, memory) = (started, success.note, success.memory)
        case let .failure(error):
            timings.load = lap()
            return outcome(.rolledBack(error), note: old.isolated == nil && old.instance is any ReloadableState ? "state kept by the running generation" : nil)
        }
        timings.load = lap()

        // Switch: one registry update, then events and routes move over in
        // one step each, then the old generation is retired.
        registry.replaceProviders(of: [id], with: live.providers)
        services.switchOver(from: ServiceOwner(pluginID: id, generation: old.generation), to: staged)
        self.live.withLock { running in
            // Gone when the old isolated generation was quarantined during
            // the reload: the new one is still the host's to stop.
            if let index = running.firstIndex(where: { $0.id == id }) { running[index] = live } else { running.append(live) }
        }
        record.status = .active
        record.generation = next
        catalog.replaceActiveRecord(of: id, with: record)
        ExtensionRegistry.$isActivating.withValue(true) { old.stop() }
        timings.switch = lap()
        return outcome(.reloaded, generation: next, note: note, memory: memory)
    }

    /// Loads a new generation's image in the host and starts it, with the
    /// old generation's state when both adopt ``ReloadableState``.
    private func reloadInProcess(
        _ old: LivePlugin, _ image: LoadableImage, build: CheckedImage, file: String, generation next: Int
    ) -> Result<(live: LivePlugin, note: String?, memory: Int), PluginLoadError> {
        let id = old.id
        let journalNote = { (phase: Quarantine.Phase) in
            CrashJournal.Note(pluginID: id, path: file, identity: build.identity, phase: phase, date: Quarantine.now())
        }
        let loaded: LoadedImage
        switch journal.record(journalNote(.`init`), {
            PluginLoader.load(image, environment: environment) { journal.registerImage($0, note: journalNote(.thread)) }
        }) {
        case let .success(success): loaded = success
        case let .failure(error): return .failure(error)
        }
        let memory = PrivateCopies.mappedBytes(of: build.copy)

        var saved: [UInt8]?
        var note: String?
        if let stateful = old.instance as? any ReloadableState {
            do {
                saved = try ExtensionRegistry.$isActivating.withValue(true) { try stateful.encodedState() }
            } catch {
                note = "state not saved by the old generation (\(error)); the new one starts fresh"
            }
        }
        let defaults = journal.record(journalNote(.`init`)) { loaded.factory.defaultConfiguration }
        let context = services.context(for: loaded.descriptor, defaults: defaults, generation: next, activePlugins: Set(activePluginIDs))
        let started = ExtensionRegistry.$isActivating.withValue(true) {
            Activation.start(
            loaded, path: file, generation: next, context: context, registry: registry, journal: journal, note: journalNote,
            beforeActivate: { instance in
                guard let saved else { return }
                guard let stateful = instance as? any ReloadableState else {
                    note = "the new generation does not adopt ReloadableState; it starts fresh"
                    return
                }
                do {
                    try stateful.restore(encodedState: saved)
                    note = "state handed over"
                } catch {
                    note = "state not restored: the new code cannot decode the old state (\(error)); it starts fresh"
                }
            })
        }
        switch started {
        case let .success(live): return .success((live, note, memory))
        case let .failure(error):
            services.retire(id, generation: next)
            return .failure(error)
        }

    }

    /// Starts a new generation in a new child, verified by its handshake,
    /// with the old generation's state (asked of its child, or of its
    /// in-process instance) when it adopts ``ReloadableState``.
    private func reloadIsolated(
        _ old: LivePlugin, _ image: LoadableImage, isolation: PluginIsolation, generation next: Int
    ) -> Result<(live: LivePlugin, note: String?, memory: Int), PluginLoadError> {
        var saved: [UInt8]?
        var note: String?
        if let child = old.isolated {
            switch child.savedState() {
            case let .success(state): saved = state
            case let .failure(error) where error.code != .pluginThrew:
                note = "state not saved by the old generation (\(error.message)); the new one starts fresh"
            case .failure: break
            }
        } else if let stateful = old.instance as? any ReloadableState {
            saved = try? ExtensionRegistry.$isActivating.withValue(true) { try stateful.encodedState() }
        }
        switch startIsolated(image, isolation: isolation, generation: next, state: saved, activePlugins: Set(activePluginIDs)) {
        case let .success(started): return .success((started.live, started.stateNote ?? note, 0))
        case let .failure(error):
            services.retire(old.id, generation: next)
            return .failure(error)
        }
    }

    /// Loads the build's copy in a scanner process before the host does (the
    /// one child protocol, as for any new file), so no build runs in the host
    /// before a child ran it; its scan, when it loaded.
    private func verify(_ build: CheckedImage, verification: ReloadVerification) -> Result<ScannedPlugin, PluginLoadError> {
        var job = PluginScanner.Job(file: build.copy)
        if case .loadAndActivate = verification {
            job.activation = .init(dataDirectory: admission.copies.directory + "/verification-data", settingsFile: services.configuration.file)
        }
        // A spare scanner, started after the previous verification, saves the
        // process start; the next one starts now, while the developer types.
        defer { spareScanner.fill(scanner) }
        let file = build.path
        switch PluginScanner(settings: scanner).scan([job], spare: spareScanner).outcomes.first {
        case let .plugin(scan)?: return .success(scan)
        case let .rejected(code, reason)?: return .failure(.reported(path: file, code: code, reason: reason))
        case let .quarantined(quarantine)?: return .failure(.verificationCrashed(path: file, detail: quarantine.account))
        case let .unavailable(detail)?: return .failure(.scannerUnavailable(path: file, detail: detail))
        case nil: return .failure(.scannerUnavailable(path: file, detail: "the scan ended without an answer"))
        }
    }
}
