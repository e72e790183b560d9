import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
@_spi(PlugboardHost) import Plugboard
import PlugboardCore
import PlugboardAdmission
import PlugboardServices
import PlugboardCatalog

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
    /// See ``PluginHost/reload(_:from:verification:beforeActing:)``.
    package func reload(
        _ pluginID: String, from file: String, verification: ReloadVerification, beforeActing: (ReloadPlan) -> Void
    ) -> ReloadOutcome {
        changes.run { _ in
            holdingLines(of: [pluginID]) {
                reloadSerially(pluginID, from: PluginDirectory.absolutePath(file), verification: verification, beforeActing: beforeActing)
            }
        }
    }

    /// See ``PluginHost/planReload(_:from:verification:)``.
    package func planReload(_ pluginID: String, from file: String, verification: ReloadVerification) -> ReloadPlan {
        changes.run { _ in
            let old = livePlugin(pluginID)
            var timings = ReloadOutcome.Timings()
            switch prepare(pluginID, old, from: PluginDirectory.absolutePath(file), verification: verification, timings: &timings) {
            case let .success(prepared):
                // Verified in a scanner, never loaded here: nothing keeps it.
                unlink(prepared.build.copy)
                return prepared.plan
            case let .failure(error):
                return ReloadPlan(
                    pluginID: pluginID, currentVersion: old?.version ?? "", newVersion: nil, rejection: error,
                    stops: [], restarts: [], refusals: [])
            }
        }
    }

    /// A build admitted and verified for a reload, with its plan.
    private struct PreparedReload {
        let old: LivePlugin
        let build: CheckedImage
        let image: LoadableImage
        let record: PluginRecord
        let plan: ReloadPlan
        /// The live plugins the plan stops, in activation order.
        let dependents: [LivePlugin]
    }

    /// Admits the build like any file (trust, one read, static checks, lock,
    /// copy) and verifies it in a scanner process, so what is checked is
    /// exactly what is loaded; then plans what happens to its dependents.
    /// Changes nothing in the host.
    private func prepare(
        _ id: String, _ old: LivePlugin?, from file: String, verification: ReloadVerification, timings: inout ReloadOutcome.Timings
    ) -> Result<PreparedReload, PluginLoadError> {
        let clock = ContinuousClock.now
        defer { timings.verify = (ContinuousClock.now - clock).milliseconds }
        guard let old else { return .failure(.notLoaded(path: file, id: id)) }
        var ownership = OwnershipCheck()
        let build: CheckedImage
        switch admission.admit(PluginDirectory.candidate(at: file), label: "\(id)-gen\(old.generation + 1).so", ownership: &ownership) {
        case let .success(checked): build = checked
        case let .failure(refusal): return .failure(refusal.error)
        }
        timings.verifyAdmission = (ContinuousClock.now - clock).milliseconds
        var record = PluginRecord(path: file, resolvedPath: build.readPath)
        record.file = build.details
        record.sha256 = build.sha256
        let image: LoadableImage
        switch verify(build, verification: verification, timings: &timings) {
        case let .failure(error): return .failure(error)
        case let .success(scan):
            guard scan.id == id else { return .failure(.reloadIDMismatch(path: file, expected: id, found: scan.id)) }
            switch admission.join(build, with: scan, from: .thisImage) {
            case let .success(joined): image = joined
            case let .failure(error): return .failure(error)
            }
        }
        record.describe(image.scan)
        guard catalog.checkInterfaces(image.scan, &record) else { return .failure(record.error!) }
        let (plan, dependents) = plan(reloading: old, to: image.scan)
        return .success(PreparedReload(old: old, build: build, image: image, record: record, plan: plan, dependents: dependents))
    }

    private func reloadSerially(
        _ id: String, from file: String, verification: ReloadVerification, beforeActing: (ReloadPlan) -> Void
    ) -> ReloadOutcome {
        var timings = ReloadOutcome.Timings()
        let running = livePlugin(id)
        let prepared: PreparedReload
        switch prepare(id, running, from: file, verification: verification, timings: &timings) {
        case let .success(success): prepared = success
        case let .failure(error):
            return ReloadOutcome(pluginID: id, result: .rejected(error), generation: running?.generation ?? 0,
                                 timings: timings, stateNote: nil, addedMemory: 0)
        }
        let old = prepared.old
        var clock = ContinuousClock.now
        func lap() -> Double {
            let now = ContinuousClock.now
            defer { clock = now }
            return (now - clock).milliseconds
        }
        func outcome(
            _ result: ReloadOutcome.Result, generation: Int? = nil, note: String? = nil, memory: Int = 0,
            dependents: [ReloadOutcome.Dependent] = []
        ) -> ReloadOutcome {
            var outcome = ReloadOutcome(pluginID: id, result: result, generation: generation ?? old.generation,
                                        timings: timings, stateNote: note, addedMemory: memory)
            outcome.plan = prepared.plan
            outcome.dependents = dependents
            return outcome
        }
        beforeActing(prepared.plan)

        // Dependents stop first, newest first, each with its state saved: no
        // plugin keeps wiring to a generation that is going away. Those
        // still live as planned (a quarantine in `beforeActing` may have
        // stopped some already).
        let dependents = table.withLock { table in
            prepared.dependents.filter { plugin in table.live.contains { $0.id == plugin.id && $0.generation == plugin.generation } }
        }
        let stopped = stopDependents(dependents)
        let next = old.generation + 1
        // Until the switch, events and routes reach the old generation only.
        let staged = ServiceOwner(pluginID: id, generation: next)
        services.stage(staged)
        defer { services.unstage(staged) }
        let started: Result<(live: LivePlugin, note: String?, memory: Int), PluginLoadError>
        if let isolation = isolation(of: id) {
            started = reloadIsolated(old, prepared.image, isolation: isolation, generation: next)
        } else {
            started = reloadInProcess(old, prepared.image, build: prepared.build, file: file, generation: next)
        }
        let live: LivePlugin
        let note: String?
        let memory: Int
        switch started {
        case let .success(success):
            var started = success.live
            started.identity = prepared.build.identity
            started.contentHash = ContentHash.text(prepared.build.hash)
            (live, note, memory) = (started, success.note, success.memory)
        case let .failure(error):
            timings.load = lap()
            // The old generation never stopped: its dependents start again on it.
            let back = restartDependents(stopped, refusals: [:])
            return outcome(.rolledBack(error), note: old.isolated == nil && old.instance is any ReloadableState ? "state kept by the running generation" : nil,
                           dependents: back)
        }

        // The new generation's providers are published, its dependents start
        // on it; if one of them fails, the whole cascade goes back.
        registry.replaceProviders(of: [id], with: live.providers)
        let refusals = Dictionary(uniqueKeysWithValues: prepared.plan.refusals.map { ($0.pluginID, $0.error) })
        let restarted = restartDependents(stopped, refusals: refusals)
        if let failed = restarted.first(where: { $0.error != nil && refusals[$0.pluginID] == nil }) {
            _ = stopDependents(dependents.filter { plugin in restarted.contains { $0.pluginID == plugin.id && $0.error == nil } }
                .compactMap { plugin in livePlugin(plugin.id) })
            registry.replaceProviders(of: [id], with: old.providers)
            live.stop()
            services.retire(id, generation: next)
            let back = restartDependents(stopped, refusals: [:])
            timings.load = lap()
            return outcome(.rolledBack(failed.error!), note: "the whole cascade was rolled back", dependents: back)
        }
        timings.load = lap()

        // Switch: events and routes move over in one step each, then the old
        // generation is retired.
        services.switchOver(from: ServiceOwner(pluginID: id, generation: old.generation), to: staged)
        var record = prepared.record
        record.status = .active
        record.generation = next
        table.withLock { table in
            guard table.replaceGeneration(of: id, from: old.path, with: live, record: record) else { return }
            services.triggers.remove([id])
            registry.replaceProviders(of: [], with: [], pending: table.pendingInterfaces)
        }
        for refusal in prepared.plan.refusals { recordStopped(refusal.pluginID, refusal.error) }
        // Calls that reach the old child's proxies from now on, unsent, go
        // to the new child; those sent finish on the old one.
        if let successor = live.isolated { old.isolated?.replaced(by: successor) }
        old.stop()
        // What the old generation registered as it stopped goes with it (as on every other stop path).
        services.retire(id, generation: old.generation)
        timings.switch = lap()
        return outcome(.reloaded, generation: next, note: note, memory: memory, dependents: restarted)
    }

    /// Loads a new generation's image in the host and starts it, with the
    /// old generation's state when both adopt ``ReloadableState``.
    private func reloadInProcess(
        _ old: LivePlugin, _ image: LoadableImage, build: CheckedImage, file: String, generation next: Int
    ) -> Result<(live: LivePlugin, note: String?, memory: Int), PluginLoadError> {
        startInProcess(
            .image(image), path: file, identity: build.identity, generation: next, state: savedState(of: old),
            activePlugins: Set(activePluginIDs)
        ).map { ($0.live, $0.note, PrivateCopies.mappedBytes(of: build.copy)) }
    }

    /// Starts a new generation in a new child, verified by its handshake,
    /// with the old generation's state (asked of its child, or of its
    /// in-process instance) when it adopts ``ReloadableState``.
    private func reloadIsolated(
        _ old: LivePlugin, _ image: LoadableImage, isolation: PluginIsolation, generation next: Int
    ) -> Result<(live: LivePlugin, note: String?, memory: Int), PluginLoadError> {
        let saved = savedState(of: old)
        switch startIsolated(image, isolation: isolation, generation: next, state: saved.bytes, activePlugins: Set(activePluginIDs)) {
        case let .success(started): return .success((started.live, started.stateNote ?? saved.note, 0))
        case let .failure(error):
            // Its routes and subscriptions are retired by the failed start.
            return .failure(error)
        }
    }

    /// Loads the build's copy in a scanner process before the host does (the
    /// one child protocol, as for any new file), so no build runs in the host
    /// before a child ran it; its scan, when it loaded.
    private func verify(
        _ build: CheckedImage, verification: ReloadVerification, timings: inout ReloadOutcome.Timings
    ) -> Result<ScannedPlugin, PluginLoadError> {
        var job = PluginScanner.Job(file: build.copy)
        if case .loadAndActivate = verification {
            job.activation = .init(dataDirectory: admission.copies.directory + "/verification-data", settingsFile: services.configuration.file)
        }
        // A spare scanner, started after the previous verification, saves the
        // process start; the next one starts now, while the developer types.
        defer { spareScanner.fill(scanner) }
        let file = build.path
        // Its answer is the verdict: the scanner ends with `_exit`, so its end
        // is not waited for (it is reaped in the background).
        let scan = PluginScanner(settings: scanner).scan([job], spare: spareScanner, endingAtAnswers: true)
        timings.verifyWait = scan.timelines.first?.waiting ?? 0
        timings.verifyInScanner = scan.timelines.first?.inChild ?? 0
        switch scan.outcomes.first {
        case let .plugin(scan)?: return .success(scan)
        case let .rejected(code, reason)?: return .failure(.reported(path: file, code: code, reason: reason))
        case let .quarantined(quarantine)?: return .failure(.verificationCrashed(path: file, detail: quarantine.account))
        case let .unavailable(detail)?: return .failure(.scannerUnavailable(path: file, detail: detail))
        case nil: return .failure(.scannerUnavailable(path: file, detail: "the scan ended without an answer"))
        }
    }
}
