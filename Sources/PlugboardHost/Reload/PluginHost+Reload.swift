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

extension PluginHost {
    /// Loads a plugin you intend to hot-reload (see ``reload(_:from:verification:)``).
    /// Like every load, it runs from a private copy, so rebuilding `file`
    /// never touches the mapped image.
    @discardableResult
    public func load(reloadable file: String) -> PluginRecord {
        defer { spareScanner.fill(configuration.scanner) }  // ready for the first reload
        return load(files: [file])[0]
    }

    /// Replaces a live plugin with a new build of it, without restarting.
    ///
    /// Steps, timed in the outcome: **verify** (load the build in a scanner
    /// process first, and with `.loadAndActivate` create and activate it
    /// there too: a crash there costs nothing), **load** (copy to a unique
    /// file, every check of a first load, create the new generation with the
    /// old one's state, activate it), **switch** (publish its providers in
    /// one registry update, then deactivate and release the old generation).
    ///
    /// Failure never costs the working version: a rejected build or a new
    /// generation that throws leaves the old generation live with its state.
    /// The old image stays mapped (Swift images cannot be unloaded); each
    /// generation adds ``ReloadOutcome/addedMemory``.
    ///
    /// Calls already running on the old generation finish there; calls that
    /// read the registry after the switch reach the new one; events and routes
    /// reach the new generation only from the switch on. `deactivate()` of the
    /// old generation runs right after the switch, so it must not break what
    /// an in-flight call may still use. The old state is saved before the new
    /// generation is created: what the old one changes after that is lost.
    /// Loads, reloads and shutdown are serialised.
    public func reload(_ pluginID: String, from file: String, verification: ReloadVerification = .load) -> ReloadOutcome {
        lifecycle.withLock { _ in reloadLocked(pluginID, from: PluginDirectory.absolutePath(file), verification: verification) }
    }

    private func reloadLocked(_ id: String, from file: String, verification: ReloadVerification) -> ReloadOutcome {
        var timings = ReloadOutcome.Timings()
        var clock = ContinuousClock.now
        func lap() -> Double {
            let now = ContinuousClock.now
            defer { clock = now }
            return (now - clock).milliseconds
        }
        guard let old = state.withLock({ $0.live.first { $0.id == id } }) else {
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
            switch admission.join(build, with: scan) {
            case let .success(joined): image = joined
            case let .failure(error): return outcome(.rejected(error))
            }
        }
        record.describe(image.scan)
        guard checkInterfaces(image.scan, &record) else { return outcome(.rejected(record.error!)) }

        // Load.
        let journalNote = { (phase: Quarantine.Phase) in
            CrashJournal.Note(pluginID: id, path: file, identity: build.identity, phase: phase, date: Quarantine.now())
        }
        let loaded: LoadedImage
        switch journal.record(journalNote(.`init`), { PluginLoader.load(image, environment: environment) }) {
        case let .success(success): loaded = success
        case let .failure(error): return outcome(.rejected(error))
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
        // Until the switch, events and routes reach the old generation only.
        let staged = ServiceOwner(pluginID: id, generation: next)
        services.stage(staged)
        defer { services.unstage(staged) }
        let defaults = journal.record(journalNote(.`init`)) { loaded.factory.defaultConfiguration }
        let context = services.context(for: loaded.descriptor, defaults: defaults, generation: next)
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
        let live: LivePlugin
        switch started {
        case var .success(started):
            started.identity = build.identity
            live = started
        case let .failure(error):
            services.retire(id, generation: next)
            timings.load = lap()
            return outcome(.rolledBack(error), note: saved == nil ? nil : "state kept by the running generation")
        }
        timings.load = lap()

        // Switch: one registry update, then events and routes move over in
        // one step each, then the old generation is retired.
        registry.replaceProviders(of: [id], with: live.providers)
        services.switchOver(from: ServiceOwner(pluginID: id, generation: old.generation), to: staged)
        state.withLock { state in
            if let index = state.live.firstIndex(where: { $0.id == id }) { state.live[index] = live }
            if let index = state.records.lastIndex(where: { $0.id == id && $0.status == .active }) {
                record.status = .active
                record.generation = next
                state.records[index] = record
            }
        }
        ExtensionRegistry.$isActivating.withValue(true) { old.instance.deactivate() }
        timings.switch = lap()
        return outcome(.reloaded, generation: next, note: note, memory: memory)
    }

    /// Loads the build's copy in a scanner process before the host does (the
    /// one child protocol, as for any new file), so no build runs in the host
    /// before a child ran it; its scan, when it loaded.
    private func verify(_ build: CheckedImage, verification: ReloadVerification) -> Result<ScannedPlugin, PluginLoadError> {
        var job = PluginScanner.Job(file: build.copy)
        if case .loadAndActivate = verification {
            job.activation = .init(dataDirectory: admission.copies.directory + "/verification-data", settingsFile: configuration.settings.file)
        }
        // A spare scanner, started after the previous verification, saves the
        // process start; the next one starts now, while the developer types.
        defer { spareScanner.fill(configuration.scanner) }
        let file = build.path
        switch PluginScanner(settings: configuration.scanner).scan([job], spare: spareScanner).outcomes.first {
        case let .plugin(scan)?: return .success(scan)
        case let .rejected(code, reason)?: return .failure(.reported(path: file, code: code, reason: reason))
        case let .quarantined(quarantine)?: return .failure(.verificationCrashed(path: file, detail: quarantine.account))
        case let .unavailable(detail)?: return .failure(.scannerUnavailable(path: file, detail: detail))
        case nil: return .failure(.scannerUnavailable(path: file, detail: "the scan ended without an answer"))
        }
    }
}
