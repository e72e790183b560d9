import CPlugboardHost
import Dispatch
import FoundationEssentials
@_spi(PlugboardHost) import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardAdmission
import PlugboardServices
import PlugboardLoading

/// An isolated plugin's child process: checks what the host sent, loads
/// the plugin's private copy, creates and activates it, then serves calls
/// side by side (``CallThreads``) until the host closes the channel (or dies).
///
/// Entered from the C constructor in `scanner.c`, before the executable's
/// `main`, when the host started it with `PLUGBOARD_SCANNER=isolated-1`.
@_cdecl("plugboard_isolated_main")
@usableFromInline
func plugboardIsolatedMain(_ requests: Int32, _ replies: Int32, _ log: Int32, _ storage: Int32) -> Never {
    // A sandbox's constructor set the limits already (its seccomp layer refuses setting them).
    if SandboxReport.current == nil {
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
    }
    let rings = (incoming: SharedRing(fd: PLUGBOARD_ISOLATED_RINGS_FD), outgoing: SharedRing(fd: PLUGBOARD_ISOLATED_RINGS_FD + 1))
    let channel = FrameChannel(input: requests, output: replies, incoming: rings.incoming, outgoing: rings.outgoing)
    let child = IsolatedChild(channel: channel, log: log, relayAnswers: storage)
    child.watchHost(requests)
    Task.detached { await child.run() }
    // The child's work runs in that task, which ends the process. The main
    // thread serves the main dispatch queue (and the main actor), as a
    // program's main thread would; in a program that links Foundation, by
    // running Foundation's main run loop. Not dispatchMain(): it calls
    // pthread_exit, which crashes inside the constructor this runs from
    // (before the program's main).
    plugboard_serve_main_queue()
}

/// The child's side of the channel.
final class IsolatedChild: @unchecked Sendable {
    // @unchecked: `plugin`, `services` and `providers` are written by run()
    // before it reads the first request after the start, and only read
    // after that, by the tasks it starts for calls (which start after the
    // writes); `serving` is an atomic, `calls` a mutex, the channels lock
    // their writes.
    let channel: FrameChannel
    let notices: ChildNoticeWriter
    var plugin: (any Plugin)?
    var services: HostServices?
    /// Requests (calls, events, a state save) being served: a hang-up
    /// then means the host is gone.
    let serving = Atomic<Int>(0)
    /// Runs the plugin's handlers of the host's events, in order.
    let eventHandlers = DispatchQueue(label: "plugboard.child-events")
    /// Events waiting for their handlers, bounded.
    let events = EventQueue(bound: IsolatedPlugin.eventQueue)
    /// Each call in flight is a task of its own, so the host can cancel it:
    /// kept in 16 shards by sequence, as every call thread removes its own
    /// (one lock for all was among the most contended of a busy child).
    let calls = (0..<16).map { _ in CallShard() }

    final class CallShard: Sendable {
        /// The tasks of the calls running, and calls whose task ended
        /// before the reading thread recorded it (it is made outside the
        /// lock: with the lock held, a fast call's task spun on it).
        private let state = Mutex<(tasks: [UInt64: Task<Void, Never>], ended: Set<UInt64>)>(([:], []))

        func started(_ sequence: UInt64, _ task: Task<Void, Never>) {
            state.withLock { state in
                if state.ended.remove(sequence) == nil { state.tasks[sequence] = task }
            }
        }

        func ended(_ sequence: UInt64) {
            state.withLock { state in
                if state.tasks.removeValue(forKey: sequence) == nil { state.ended.insert(sequence) }
            }
        }

        func task(_ sequence: UInt64) -> Task<Void, Never>? { state.withLock { $0.tasks[sequence] } }

        var running: [Task<Void, Never>] { state.withLock { Array($0.tasks.values) } }
    }

    func shard(_ sequence: UInt64) -> CallShard { calls[Int(sequence & 15)] }
    var providers: [(crossing: PointCrossing, provider: any Sendable)] = []

    /// Asks the host to make what the child cannot (``HostRelay``).
    let host: HostRelay.Asker
    /// The plugin's routes: registered in the host, served here.
    let router: RelayedRouter

    init(channel: FrameChannel, log: Int32, relayAnswers: Int32) {
        self.channel = channel
        notices = ChildNoticeWriter(fd: log)
        host = HostRelay.Asker(notices: notices, answers: FrameChannel(input: relayAnswers, output: -1))
        router = RelayedRouter(host: host)
    }

    /// Ends the process when the host's end of the request pipe hangs up:
    /// the host exited or was killed, even while a call of the plugin's
    /// hangs (the main loop would never read the end of the stream).
    ///
    /// A hang-up while no call runs is most likely a stop: the main loop
    /// reads the end of the stream and deactivates the plugin, so the
    /// watcher only ends the process if that has not happened after a grace
    /// longer than the host's.
    func watchHost(_ requests: Int32) {
        startDetachedThread(stackSize: 64 << 10) { [self] in
            var poller = pollfd(fd: requests, events: 0, revents: 0)
            while true {
                guard poll(&poller, 1, -1) > 0 else { continue }
                // The plugin closed the descriptor: the main loop's read fails and ends the process.
                if poller.revents & Int16(POLLNVAL) != 0 { return }
                guard poller.revents & Int16(POLLHUP | POLLERR) != 0 else { continue }
                if serving.load(ordering: .acquiring) == 0 { sleep(3) }
                // The whole group: processes the plugin started end too
                // (this child leads it), unless they left it.
                kill(0, SIGKILL)
                _exit(0)
            }
        }
    }

    func run() async {
        // This process is the host library's: a write to a host that is gone is EPIPE, never a signal.
        plugboard_ignore_sigpipe()
        let start: FrameChannel.Frame
        do {
            start = try channel.receive(until: nil)
        } catch {
            _exit(0)
        }
        guard start.kind == IsolationProtocol.Kind.start.rawValue,
              let request = try? CompactDecoder().decode(IsolationProtocol.StartRequest.self, from: start.payload)
        else {
            fail(start.sequence, "isolation-handshake-failed", "the host's first message was not a start request this program understands")
        }
        await begin(request, sequence: start.sequence)
        let threads = CallThreads(maximum: request.limits.callsInFlight)
        // Cancels of calls not read yet (their frames cross on one pipe, in
        // the host's order of writing, which may put the cancel first).
        // This loop alone uses them.
        var earlyCancels = Set<UInt64>()
        while true {
            let frame: FrameChannel.Frame
            do {
                frame = try channel.receive(until: nil)
            } catch {
                break
            }
            serving.add(1, ordering: .releasing)
            switch IsolationProtocol.Kind(rawValue: frame.kind) {
            case .call?:
                let sequence = frame.sequence
                let task = Task(executorPreference: threads) {
                    await self.serve(frame)
                    self.shard(sequence).ended(sequence)
                }
                shard(sequence).started(sequence, task)
                // Its cancel came first (the host cancels as it sends).
                if !earlyCancels.isEmpty, earlyCancels.remove(sequence) != nil { task.cancel() }
            case .cancel?:
                if let task = shard(frame.sequence).task(frame.sequence) {
                    task.cancel()
                } else {
                    // Not read yet (cancelled as it arrives), or answered
                    // already: kept, a bounded number of them.
                    if earlyCancels.count >= 4_096 { earlyCancels.removeAll() }
                    earlyCancels.insert(frame.sequence)
                }
                serving.subtract(1, ordering: .releasing)
            case .ping?:
                // From this thread, whatever the call threads do: a child
                // whose calls are stuck still answers (it is slow, not dead).
                var asked: UInt64 = 0
                _ = withUnsafeMutableBytes(of: &asked) { frame.payload.prefix(8).copyBytes(to: $0) }
                let runs = shard(UInt64(littleEndian: asked)).task(UInt64(littleEndian: asked)) != nil
                answer(.pong, frame.sequence, [runs ? 1 : 0])
            case .saveState?: sendState(frame.sequence)
            case .event?:
                // In order, beside the calls: a slow handler holds up later
                // events (at most `eventQueue` wait), never a call.
                let payload = frame.payload
                if events.enter() {
                    eventHandlers.async {
                        self.deliver(payload)
                        self.events.leave()
                    }
                } else {
                    let (report, firstUntold) = events.dropToTell()
                    // The host counts the events dropped here: told after the
                    // events queued before them, so before any event after
                    // them is handled, even if none follows (one teller waits
                    // at a time: it is queued when none is owed).
                    if firstUntold {
                        eventHandlers.async {
                            if case let told = self.events.takeUntold(), told > 0 { self.notices.send(.eventsDropped(told)) }
                        }
                    }
                    if report {
                        notices.send(.diagnostic(IsolationProtocol.Diagnostic(
                            error: false, code: "event-dropped",
                            message: "its event handlers take events slower than they come: past \(events.bound) waiting, events are dropped until they catch up",
                            keyPath: nil)))
                    }
                }
                serving.subtract(1, ordering: .releasing)
            default: serving.subtract(1, ordering: .releasing)
            }
        }
        // The host closed the channel: the calls in flight are answered
        // before the plugin is deactivated.
        for call in calls.flatMap(\.running) { await call.value }
        // And the event handlers queued before it.
        eventHandlers.sync {}
        plugin?.deactivate()
        _exit(0)
    }

    /// The handshake's checks, then the plugin's init and activate.
    func begin(_ request: IsolationProtocol.StartRequest, sequence: UInt64) async {
        let environment = HostEnvironment.current
        guard request.protocolVersion == IsolationProtocol.version else {
            fail(sequence, "isolation-handshake-failed", "the host speaks isolation protocol \(request.protocolVersion), this program \(IsolationProtocol.version): start the child from the host's own program or one built with the same PlugboardHost")
        }
        guard request.sdkABI == [environment.sdkABI.major, environment.sdkABI.minor] else {
            fail(sequence, "isolation-handshake-failed", "the host was built with SDK ABI \(request.sdkABI.map(String.init).joined(separator: ".")), this program with \(environment.sdkABI): ScannerSettings.executable must be built with the host's SDK")
        }
        let unjoined = plugboard_cgroup_join_failures().map { String(cString: $0) }
        if let unjoined, request.limits.boundsRequired == true {
            fail(sequence, "resource-bounds-unavailable", "\(request.path): plugin \(request.pluginID)'s bounds are required and its child could not join its cgroup \(unjoined); nothing of the plugin ran. Fix: run the host where it may write those cgroups (docs/sandbox.md, \"Resources\"), or let it start without them (PluginIsolation.Limits.bounds = .bestEffort)")
        }
        let sandbox = SandboxReport.current
        if let wanted = request.sandbox {
            let unmet = (sandbox ?? SandboxReport()).unmet(wanted.needed)
            if wanted.required && !unmet.isEmpty {
                fail(sequence, "sandbox-unavailable", "\(request.path): plugin \(request.pluginID) must run sandboxed and its child did not reach \(unmet.map { "\($0.layer) (\($0.reason))" }.joined(separator: "; ")); nothing of the plugin ran. Fix: run the host on a kernel with Landlock and seccomp (docs/sandbox.md, \"Checking a machine\"), or let it start with what this machine offers (PluginSandbox.Enforcement.bestEffort; the host is then tainted)")
            }
        } else {
            applyLimits(request.limits)
        }
        let fd = open(request.file, O_RDONLY | O_CLOEXEC)
        let bytes = fd >= 0 ? readToEnd(fd) : nil
        if fd >= 0 { close(fd) }
        guard let bytes, ContentHash.text(bytes.withUnsafeBytes(ContentHash.of)) == request.contentHash else {
            fail(sequence, "file-changed", "\(request.path): the bytes the child found are not the ones the host admitted; nothing of the plugin ran")
        }
        // Foundation, if the plugin or an interface library links it, is
        // loaded by the main thread first (the child does not link it).
        let foundation = FoundationNeed.linked(by: [bytes]) || FoundationNeed.linked(byFiles: request.libraries ?? [])
        _ = plugboard_prepare_main_thread(foundation ? 1 : 0)
        // The points the SDK defines are here already; a host's own are in
        // its interface libraries, loaded first (the plugin links the same
        // ones: the loader then finds them loaded, by their soname).
        for library in request.libraries ?? [] where dlopen(library, RTLD_NOW | RTLD_GLOBAL) == nil {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown"
            fail(sequence, "isolation-point-missing", "\(request.path): the interface library \(library) of plugin \(request.pluginID)'s points cannot be loaded in its child: \(reason)")
        }
        var crossings = request.points.map { PointCrossing(typeName: $0.typeName) }
        let image: LoadedImage
        switch PluginLoader.loadInChildProcess(request.file, reportedAs: request.path, environment: environment, phase: { _ in }) {
        case let .success(loaded): image = loaded
        case let .failure(error): fail(sequence, error.code.rawValue, error.reason)
        }
        for (index, point) in request.points.enumerated() where crossings[index] == nil {
            crossings[index] = PointCrossing(typeName: point.typeName)
            guard crossings[index] != nil else {
                fail(sequence, "isolation-point-missing", "extension point \(point.interfaceID) (\(point.typeName)) is neither in plugboard-child nor in a library plugin \(request.pluginID) links: declare an isolatable point in an interface package built as a dynamic library that host and plugins link (docs/isolation.md)")
            }
        }
        guard image.descriptor.id == request.pluginID else {
            fail(sequence, "file-changed", "\(request.path): it now says plugin \(image.descriptor.id), it was \(request.pluginID) when scanned")
        }
        let services = childServices(request)
        self.services = services
        let context = services.context(
            for: image.descriptor, defaults: image.factory.defaultConfiguration, activePlugins: Set(request.activePlugins))
        let instance: any Plugin
        do {
            instance = try image.factory.make(context: context)
        } catch {
            fail(sequence, "init-failed", "\(request.path): init of plugin \(request.pluginID) threw: \(error)")
        }
        var stateNote: String?
        if let state = request.state {
            if let stateful = instance as? any ReloadableState {
                do {
                    try stateful.restore(encodedState: state)
                    stateNote = "state handed over"
                } catch {
                    stateNote = "state not restored: the new code cannot decode the old state (\(error)); it starts fresh"
                }
            } else {
                stateNote = "the new generation does not adopt ReloadableState; it starts fresh"
            }
        }
        do {
            try instance.activate()
        } catch {
            fail(sequence, "activate-failed", "\(request.path): activate of plugin \(request.pluginID) threw: \(error)")
        }
        plugin = instance
        var reply = IsolationProtocol.StartReply(providers: [], subscriptions: [], stateNote: stateNote, sandbox: sandbox)
        reply.unjoined = unjoined
        // Each side writes to its ring once the other reads it.
        if request.rings == true && channel.hasRings {
            channel.useRings()
            reply.rings = true
        }
        let contributions = instance.contributions()
        for case let crossing? in crossings {
            guard contributions.contains(where: { $0.interfaceID == crossing.interfaceID }) else {
                let error = PluginLoadError.missingProvider(path: request.path, id: request.pluginID, interface: crossing.interfaceID)
                fail(sequence, error.code.rawValue, error.reason)
            }
            for contribution in contributions where contribution.interfaceID == crossing.interfaceID {
                guard crossing.accepts(contribution.provider) else {
                    fail(sequence, "provider-type-mismatch", "\(request.path): plugin \(request.pluginID) provides \(crossing.interfaceID) with a \(String(reflecting: type(of: contribution.provider))), not the point's provider type")
                }
                do {
                    reply.providers.append(.init(interfaceID: crossing.interfaceID, profile: try crossing.profile(contribution.provider)))
                } catch {
                    fail(sequence, "isolation-handshake-failed", "the profile of plugin \(request.pluginID)'s \(crossing.interfaceID) provider cannot be encoded: \(error)")
                }
                providers.append((crossing, contribution.provider))
            }
        }
        reply.subscriptions = notices.announcedNames
        send(.started, sequence, reply)
    }

    /// Services as the host would grant them, backed here: logging to the
    /// log pipe, configuration merged with the host's overrides, storage in
    /// the plugin's own folder with the host's quota.
    func childServices(_ request: IsolationProtocol.StartRequest) -> HostServices {
        var settings = HostSettings(file: request.settingsFile)
        settings.plugins[request.pluginID] = HostSettings.PluginSettings(
            deniedServices: Set(request.deniedServices), overrides: request.overrides.mapValues(\.value))
        let quota = request.quota.count == 3
            ? StorageQuota(maximumBytes: request.quota[0], maximumKeys: request.quota[1], maximumValueBytes: request.quota[2])
            : StorageQuota()
        let notices = self.notices
        let sink = LogSink(minimumLevel: .trace) { record in notices.send(.log(record.level, record.message)) }
        // Diagnostics of the child's services (configuration, storage
        // quotas, event handlers) are the host's to report.
        let diagnostics = DiagnosticLog(capacity: 1) { diagnostic in
            notices.send(.diagnostic(IsolationProtocol.Diagnostic(
                error: diagnostic.severity == .error, code: diagnostic.code.rawValue, message: diagnostic.message, keyPath: diagnostic.keyPath)))
        }
        // Sandboxed, its folder is read-only to it: the host makes its writes.
        let host = self.host, router = self.router
        let relayed: (@Sendable (FileKeyValueStore) -> any KeyValueStore)? = request.sandbox == nil ? nil : { @Sendable local in
            RelayedKeyValueStore(local: local, host: host)
        }
        return HostServices(
            configuration: settings, dataDirectory: request.dataDirectory, logSink: sink, storageQuota: quota, diagnostics: diagnostics,
            makeEventBus: { hub, owner in IsolatedEventBus(hub: hub, owner: owner, notices: notices) }, makeStore: relayed,
            makeRouter: { _ in router })
    }

    func applyLimits(_ limits: IsolationProtocol.StartRequest.Limits) {
        func set(_ resource: Int32, _ value: Int?) {
            guard let value else { return }
            var limit = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
            setrlimit(__rlimit_resource_t(UInt32(resource)), &limit)
        }
        set(Int32(RLIMIT_CPU.rawValue), limits.cpuSeconds)
        set(Int32(RLIMIT_NOFILE.rawValue), limits.descriptors)
        set(Int32(__RLIMIT_NPROC.rawValue), limits.processes)
        if plugboard_under_sanitizer() == 0 { set(Int32(RLIMIT_AS.rawValue), limits.addressSpace) }
    }

}
