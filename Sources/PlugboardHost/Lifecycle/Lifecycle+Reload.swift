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

        // Load.
        let journalNote = { (phase: Quarantine.Phase) in
            CrashJournal.Note(pluginID: id, path: file, identity: build.identity, phase: phase, date: Quarantine.now())
        }
        let loaded: LoadedImage
        switch journal.record(journalNote(.`init`), {
            PluginLoader.load(image, environment: environment) { journal.registerImage($0, note: journalNote(.thread)) }
        }) {
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
        self.live.withLock { running in
            if let index = running.firstIndex(where: { $0.id == id }) { running[index] = live }
        }
        record.status = .active
        record.generation = next
        catalog.replaceActiveRecord(of: id, with: record)
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
