import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
@_spi(PlugboardHost) import Plugboard
import PlugboardCore
import PlugboardAdmission
import PlugboardServices
import PlugboardLoading
import PlugboardIsolation

extension Lifecycle {
    /// The services an isolated plugin can use: each is backed in the child
    /// (logging goes to the host's log over a pipe; configuration is merged
    /// there with the host's overrides; storage opens the plugin's own folder
    /// with the host's quota, under the same lock and usage record; events
    /// cross both ways, asynchronously).
    /// The router registers an isolated plugin's routes in the host's table
    /// and serves them by calling the child (routes registered with
    /// `Router.serve`, whose requests and responses are values).
    static let servicesThatCross: Set<String> = [
        Services.Logging.id, Services.Configuration.id, Services.Storage.id, Services.Events.id, Services.Router.id,
    ]

    /// Whether plugin `id` runs in a child process, and with which limits.
    func isolation(of id: String) -> PluginIsolation? {
        let chosen = configuration.isolation(id, !configuration.isolatesUnsigned || isSignedByHost)
        return chosen.isolated ? chosen : nil
    }

    /// Whether the lock file in force holds a signature by one of the
    /// host's own keys (every file admitted under it is listed in it).
    var isSignedByHost: Bool {
        guard let keyID = admission.lock?.signedLock?.keyID else { return false }
        return ownKeyIDs.contains(keyID)
    }

    /// Starts an admitted plugin in a child process: refused, before any of
    /// its code runs, when a point it provides or a service it uses cannot
    /// cross. `state` is a previous generation's (a hot reload).
    func startIsolated(
        _ image: LoadableImage, isolation: PluginIsolation, generation: Int, state: [UInt8]? = nil, activePlugins: Set<String> = []
    ) -> Result<(live: LivePlugin, stateNote: String?), PluginLoadError> {
        let scan = image.scan
        let path = image.path
        let program: String
        switch ChildProgram.locate(configured: configuration.childProgram) {
        case let .success(found): program = found
        case let .failure(missing): return .failure(.isolationChildMissing(path: path, id: scan.id, reason: missing.reason))
        }
        var points: [IsolationProtocol.StartRequest.Point] = []
        var crossings: [String: PointCrossing] = [:]
        var policies: [String: IsolatedCallPolicy] = [:]
        var libraries: [String] = []
        for interface in scan.provides {
            guard let point = registry.declaredPoint(for: interface.interface), let isolated = isolatedPoints.point(for: interface.interface) else { continue }
            guard let crossing = isolated.crossing else {
                return .failure(.isolationUnsupportedPoint(path: path, id: scan.id, interface: interface.interface, providerType: point.providerTypeName))
            }
            points.append(.init(interfaceID: interface.interface, major: point.interface.version.major, minor: point.interface.version.minor, typeName: crossing.typeName))
            crossings[interface.interface] = crossing
            policies[interface.interface] = isolated.calls
            if let library = isolated.library, !libraries.contains(library) { libraries.append(library) }
        }
        let settings = configuration.settings.plugins[scan.id]
        let denied = settings?.deniedServices ?? []
        for service in scan.services.sorted() where !denied.contains(service) && !Self.servicesThatCross.contains(service) {
            return .failure(.isolationUnsupportedService(path: path, id: scan.id, service: service))
        }
        let bounds = ChildBounds(isolation.limits)
        let unreachable = bounds.unreachable()
        if !unreachable.isEmpty {
            if bounds.enforcement == .required { return .failure(.resourceBoundsUnavailable(path: path, id: scan.id, missing: unreachable)) }
            reportBoundsGap(unreachable)
        }
        let quota = configuration.storageQuota
        var extraEnvironment = scanner.extraEnvironment
        if !libraries.isEmpty {
            // The plugin names its interface libraries by file name (they
            // have no soname): the child's loader finds them where the host's
            // are, as the same files the child loads first.
            var folders: [String] = []
            for folder in libraries.map(OwnershipCheck.parent(of:)) where !folders.contains(folder) { folders.append(folder) }
            if let given = extraEnvironment["LD_LIBRARY_PATH"] { folders.append(given) }
            extraEnvironment["LD_LIBRARY_PATH"] = folders.joined(separator: ":")
        }
        var sandbox: IsolationProtocol.StartRequest.Sandbox?
        if var confinement = isolation.sandbox {
            // Refused before any of its code runs when a need is not
            // granted; given only what is both declared and granted.
            let needs = scan.needs.compactMap(DeclaredNeed.init)
            let refused = needs.filter { !$0.isGranted(by: confinement.grants) }
            guard refused.isEmpty else { return .failure(.sandboxNeedNotGranted(path: path, id: scan.id, needs: refused)) }
            confinement.grants = SandboxPolicy.granted(confinement.grants, declared: needs)
            let policy = SandboxPolicy.child(
                confinement, copy: image.checked.copy, libraries: libraries,
                storage: services.dataDirectory.map { FileKeyValueStore(root: $0, folder: scan.id) }, limits: isolation.limits)
            extraEnvironment[SandboxPolicy.variable] = policy.encoded
            sandbox = .init(needed: policy.neededLayers, required: confinement.enforcement == .required)
        }
        var request = IsolationProtocol.StartRequest(
            protocolVersion: IsolationProtocol.version, sdkABI: [environment.sdkABI.major, environment.sdkABI.minor],
            file: image.checked.copy, path: path, pluginID: scan.id, contentHash: ContentHash.text(image.checked.hash),
            points: points, deniedServices: denied.sorted(),
            overrides: (settings?.overrides ?? [:]).mapValues(IsolationProtocol.WireValue.init),
            settingsFile: configuration.settings.file, dataDirectory: services.dataDirectory,
            quota: [quota.maximumBytes, quota.maximumKeys, quota.maximumValueBytes],
            limits: .init(cpuSeconds: isolation.limits.cpuSeconds, addressSpace: isolation.limits.addressSpace, descriptors: isolation.limits.descriptors,
                          callsInFlight: isolation.limits.callsInFlight),
            state: nil, activePlugins: activePlugins.sorted())
        request.sandbox = sandbox
        request.limits.processes = ChildBounds.processLimit()
        request.limits.boundsRequired = bounds.enforcement == .required ? true : nil
        request.libraries = libraries.isEmpty ? nil : libraries
        // Its children register routes in the host's table, if it may.
        let owner = ServiceOwner(pluginID: scan.id, generation: generation)
        let router = PluginRouter(table: services.routes, owner: owner, report: services.report)
        let mayRoute = scan.services.contains(Services.Router.id) && !denied.contains(Services.Router.id)
        let launch = IsolatedPlugin.Launch(
            program: program, environmentNames: scanner.environment, extraEnvironment: extraEnvironment,
            request: request, crossings: crossings, policies: policies, budget: configuration.restartBudget,
            startTimeout: configuration.startTimeout, logSink: services.logSink, report: services.report,
            events: configuration.isolationEvents, eventHub: services.events,
            registerRoute: mayRoute ? router.register : nil,
            retireRoutes: { [services] in services.routes.removeAll(owner: owner) }, bounds: bounds)
        let id = scan.id
        let slots: CallSlots
        var restarting: [CallSlots] = []
        do {
            // At most 4,096 in flight for the whole pool.
            slots = try CallSlots.make(count: min(isolation.limits.callsInFlight * isolation.children, CallSlots.maximum)).get()
            for _ in 0..<isolation.children { restarting.append(try CallSlots.make().get()) }
        } catch {
            return .failure(.isolationFailed(path: path, code: .pluginCrashed, reason: "its child cannot be started: no pipe for its calls (\(error.reason))"))
        }
        let plugin = IsolatedPlugin(
            pluginID: id, path: path, generation: generation, launch: launch, slots: slots, restarting: restarting,
            onQuarantine: { [weak self] quarantine in self?.quarantineIsolated(id, generation: generation, quarantine) },
            onAvailability: { [weak self] available in self?.showIsolated(id, generation: generation, available) })
        // What its child asks the host while it starts gets what is active.
        switch services.starting.during(owner, { plugin.start(state: state) }) {
        case let .success((providers, note)):
            if let partial = plugin.status.sandbox, partial.level != "sandboxed" {
                let gaps = partial.missing.joined(separator: "; ")
                services.report(HostDiagnostic(.warning, code: "sandbox-partial",
                    message: "started best effort with its sandbox incomplete: \(gaps)", plugin: id))
                taint.mark(HostTaint.sandboxPartial, "plugin \(id) runs with its sandbox incomplete (\(gaps))")
            }
            let live = LivePlugin(
                id: id, path: path, generation: generation, running: .isolated(plugin), providers: providers,
                version: scan.version, requires: scan.dependencies, image: image)
            return .success((live, note))
        case let .failure(error):
            // What its children registered before the start failed goes too.
            services.retire(id, generation: generation)
            return .failure(error)
        }
    }

    /// Over its restart budget: out of the registry, quarantined in the
    /// catalog and the cache (the next start keeps it out too).
    private func quarantineIsolated(_ id: String, generation: Int, _ quarantine: Quarantine) {
        var quarantine = quarantine
        quarantine.taint = journal.taint?.codes
        let current = table.withLock { table -> LivePlugin? in
            guard let index = table.live.firstIndex(where: { $0.id == id && $0.generation == generation }) else { return nil }
            let current = table.live.remove(at: index)
            table.quarantinedIsolated[id] = current.isolated
            table.stopActive(id, .quarantined(path: current.path, quarantine: quarantine))
            // This generation's providers only: a reload may have published the next.
            registry.removeProviders(of: id, generation: generation)
            return current
        }
        guard let current else { return }
        services.retire(id, generation: generation)
        catalog.quarantineInCache(path: current.path, identity: current.identity, quarantine)
        // The plugins that require it stop as a change, holding their
        // lines: at once when this thread runs the change under way or none
        // is, else on a thread of its own once the change is done.
        let error = PluginLoadError.quarantined(path: current.path, quarantine: quarantine)
        let cascade = { [self] in holdingLines(of: [id]) { stopDependents(ofQuarantined: id, error) } }
        if changes.isCurrentThread {
            cascade()
        } else if changes.runIfFree({ _ in cascade() }) == nil {
            startDetachedThread { [weak self] in
                self?.changes.run { shutDown in if !shutDown { self?.holdingLines(of: [id]) { self?.stopDependents(ofQuarantined: id, error) } } }
            }
        }
    }

    /// A fail-open plugin went down (its providers of fail-open points are
    /// hidden) or came back.
    private func showIsolated(_ id: String, generation: Int, _ available: Bool) {
        guard let current = table.withLock({ $0.live.first { $0.id == id && $0.generation == generation } }) else { return }
        let shown = available ? current.providers : current.providers.filter { provider in
            isolatedPoints.point(for: provider.interfaceID)?.calls.failure != .open
        }
        registry.replaceProviders(of: [id], with: shown)
    }

    /// `records` with where each available or active plugin runs, and its
    /// child's state when isolated.
    package func withIsolation(_ records: consuming [PluginRecord]) -> [PluginRecord] {
        // In place: a copy of each record per installed plugin of every start.
        for index in records.indices {
            if let id = records[index].id, records[index].status == .active || records[index].status == .available {
                records[index].isolation = isolationStatus(of: id)
            }
        }
        return records
    }

    /// Each plugin's isolation as `list` and `inspect` show it.
    func isolationStatus(of id: String) -> IsolationStatus {
        if let plugin = livePlugin(id) {
            return plugin.isolated?.status ?? IsolationStatus(mode: "in-process", state: "running", pid: nil, restarts: 0)
        }
        let chosen = isolation(of: id)
        let mode = chosen == nil ? "in-process" : chosen?.sandbox == nil ? "isolated" : "sandboxed"
        var status = IsolationStatus(mode: mode, state: "not-started", pid: nil, restarts: 0)
        // The bounds its children would get here (no figures before a child runs).
        status.resources = chosen.map { ChildBounds($0.limits).held() }
        return status
    }
}

extension Lifecycle {
    /// What a snapshot shows of a live plugin: generation, start, hash, and
    /// the isolated plugin (its counts).
    func liveFacts(of id: String) -> (generation: Int, activatedAt: Date, contentHash: String?, isolated: IsolatedPlugin?)? {
        guard let plugin = livePlugin(id) else { return nil }
        return (plugin.generation, plugin.activatedAt, plugin.contentHash, plugin.isolated)
    }

    /// Once a host: its children run without bounds this machine cannot
    /// hold (best effort). A sandboxed child's gap taints, as its sandbox's does.
    func reportBoundsGap(_ missing: [String]) {
        guard !boundsGapReported.exchange(true, ordering: .relaxed) else { return }
        services.report(HostDiagnostic(.warning, code: "resource-bounds-unavailable",
            message: "isolated plugins' children run without these bounds: \(missing.joined(separator: "; ")) (docs/sandbox.md, \"Resources\")"))
    }
}
