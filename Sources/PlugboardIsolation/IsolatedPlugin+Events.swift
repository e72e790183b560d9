import Dispatch
import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardServices

/// Notices from the child (log records, subscriptions, publications,
/// diagnostics) and the events the host forwards to it.
extension IsolatedPlugin {
    /// A notice from the child's notice pipe (on the thread draining it).
    func handle(_ notice: ChildNotice) {
        switch notice {
        case let .log(level, message):
            HostLogger(label: pluginID, sink: launch.logSink).log(level, message)
        case let .subscribe(name):
            // While it starts, its subscriptions come with the start reply;
            // after it stopped, nobody may subscribe in its name.
            if state.withLock({ $0.phase == .running }) { subscribe(name) }
        case let .publish(event):
            // A generation stopped or quarantined publishes nothing more.
            guard isServing else { return }
            // Not on this thread: subscribers run host code that may call
            // this plugin, and the child's pipes must keep being read. At
            // most `eventQueue` wait: a child publishing faster than the
            // host's subscribers take its events loses the excess, counted.
            guard eventQueues.published.enter() else {
                return droppedPublication()
            }
            let owner = ServiceOwner(pluginID: pluginID, generation: generation)
            let hub = launch.eventHub, queue = eventQueues.published
            publications.async {
                _ = EventHub.within(event.chain) { hub.publish(event.payload, from: owner) }
                queue.leave()
            }
        case let .diagnostic(diagnostic):
            launch.report(HostDiagnostic(diagnostic.error ? .error : .warning, code: .init(diagnostic.code), message: diagnostic.message,
                                         file: diagnostic.keyPath == nil ? nil : launch.request.settingsFile, keyPath: diagnostic.keyPath, plugin: pluginID))
        case let .eventsDropped(count):
            // Its own diagnostic said so once; the count is the host's. A
            // child is not trusted: it cannot tell more drops than events
            // were written to it (a forged count would overflow the counter).
            eventQueues.delivered.dropped.add(eventQueues.acceptChildDrops(count), ordering: .relaxed)
        case .relay:
            // Answered by the thread that drains the child's notices (ChildOutput).
            break
        }
    }

    /// Not stopped nor quarantined: what its children publish or ask for
    /// still counts.
    var isServing: Bool { state.withLock { $0.phase == .running || $0.phase == .notStarted } }

    /// A request the child relays (``HostRelay``), answered on the thread
    /// draining its notices: nothing here runs plugin code. `spawn` numbers
    /// the child that asks.
    func relay(_ request: HostRelay.Request, from spawn: Int) -> HostRelay.Answer {
        guard isServing else {
            return HostRelay.Answer(ServiceError(.serviceUnavailable, "its host stopped it"))
        }
        switch request.operation {
        case .set, .remove: return store(request)
        case .route: return registerRoute(request.key, from: spawn)
        }
    }

    /// Routes one plugin may register, and the longest pattern: a child is
    /// not trusted, and every route costs the host's table.
    static let routeLimit = 1_024, patternLimit = 2_048

    /// A route the child registers: in the host's table, where calls for it
    /// come to a child. Another child of the pool, or a restarted one,
    /// registers its routes again: those stand. The same child registering
    /// a pattern twice is a conflict, as in process.
    private func registerRoute(_ pattern: String, from spawn: Int) -> HostRelay.Answer {
        guard let register = launch.registerRoute else {
            return HostRelay.Answer(ServiceError(.serviceNotDeclared, "this plugin may not register routes: it did not list plugboard.router in services:, or the host denies it", path: nil))
        }
        guard pattern.utf8.count <= Self.patternLimit else {
            return HostRelay.Answer(ServiceError(.routeInvalidPattern, "a route pattern of \(pattern.utf8.count) bytes, over the limit of \(Self.patternLimit)", path: String(pattern.prefix(80))))
        }
        enum Claim { case fresh, standing, again, full }
        // Claimed under the lock before the table sees it: two children
        // registering one pattern together register it once.
        let claim = state.withLock { state -> Claim in
            if var children = state.routes[pattern] {
                defer { state.routes[pattern] = children }
                return children.insert(spawn).inserted ? .standing : .again
            }
            guard state.routes.count < Self.routeLimit else { return .full }
            state.routes[pattern] = [spawn]
            return .fresh
        }
        switch claim {
        case .standing: return HostRelay.Answer(nil)
        case .again:
            return HostRelay.Answer(ServiceError(.routeConflict, "route '\(pattern)' is already registered by \(pluginID); the first registration wins, so register another pattern", path: pattern))
        case .full:
            return HostRelay.Answer(ServiceError(.routeInvalidPattern, "a plugin may register at most \(Self.routeLimit) routes", path: pattern))
        case .fresh: break
        }
        let pluginID = pluginID
        do {
            try register(pattern) { [weak self] match in
                guard let self else { throw IsolatedCallError(.pluginUnavailable, pluginID: pluginID, message: "its host stopped it") }
                return RouteEndpoint(match: match) { request in try self.respond(to: request, pattern: pattern, match: match) }
            }
        } catch {
            _ = state.withLock { $0.routes.removeValue(forKey: pattern) }
            return HostRelay.Answer(error)
        }
        // Stopped meanwhile: its routes may have been retired before this one came.
        if !isServing { launch.retireRoutes() }
        return HostRelay.Answer(nil)
    }

    /// A sandboxed child's storage write, made here in its folder with the
    /// host's quota (a plain child writes its folder itself).
    private func store(_ request: HostRelay.Request) -> HostRelay.Answer {
        guard launch.request.sandbox != nil, let root = launch.request.dataDirectory else {
            return HostRelay.Answer(ServiceError(.storageNotWritable, "this plugin's storage writes are not made by the host"))
        }
        let quota = launch.request.quota
        let report = launch.report, id = pluginID
        let store = FileKeyValueStore(
            root: root, folder: pluginID,
            quota: quota.count == 3 ? StorageQuota(maximumBytes: quota[0], maximumKeys: quota[1], maximumValueBytes: quota[2]) : StorageQuota()
        ) { error in report(HostDiagnostic(.warning, code: .init(error.code.rawValue), message: error.message, plugin: id)) }
        return HostRelay.perform(request, in: store)
    }

    /// Forwards the host's `name` events to the child from now on (once per name).
    func subscribe(_ name: String) {
        guard subscribed.withLock({ $0.insert(name).inserted }) else { return }
        let pluginID = pluginID
        _ = launch.eventHub.subscribe(owner: ServiceOwner(pluginID: pluginID, generation: generation), event: name) { [weak self] payload in
            guard let self else {
                throw IsolatedCallError(.pluginUnavailable, pluginID: pluginID, message: "it is no longer running; the event was not delivered")
            }
            try deliver(payload)
        }
    }

    /// Sends an event to the child without waiting (its handlers run there,
    /// in order, beside the calls): queued here, at most `eventQueue` of
    /// them, and written by the plugin's own queue as its request pipe has
    /// room. Throws (a failed delivery) when the child is down (a diagnostic
    /// each time) or the queue is full (counted, one diagnostic per episode).
    func deliver(_ payload: EventPayload) throws {
        // One child of a pool takes it: the first running, so that events keep their order while it lives.
        guard let child = state.withLock({ state in state.phase == .running ? state.children.lazy.compactMap { $0 }.first : nil }) else {
            // Counted, reported once per outage: events keep coming while it is down.
            if eventQueues.delivered.drop() {
                launch.report(HostDiagnostic(.warning, code: "event-dropped",
                    message: "its child is not running: events to it are dropped (counted in the snapshot) until its next call starts it", plugin: pluginID))
            }
            throw EventNotQueued(description: "\(pluginID): its child is not running; the event was not delivered")
        }
        let json: [UInt8]
        do {
            json = try payload.json()
        } catch {
            throw IsolatedCallError(.pluginThrew, pluginID: pluginID, message: "the event cannot be encoded: \(error)")
        }
        // Called while the hub delivers this event: the chain includes it.
        let event = CrossingEvent(name: payload.name, chain: EventHub.currentChain, json: json)
        let queue = eventQueues.delivered
        guard queue.enter() else {
            // Reported once per episode here, not once per event by the hub.
            if queue.drop() {
                launch.report(HostDiagnostic(.warning, code: "event-dropped",
                    message: "its child takes events slower than they come: past \(queue.bound) waiting, events to it are dropped (counted in the snapshot) until the queue drains",
                    plugin: pluginID))
            }
            throw EventNotQueued(description: "\(pluginID): \(queue.bound) events wait for its child already; the event was not delivered")
        }
        let report = launch.report, pluginID = pluginID, name = payload.name, queues = eventQueues
        deliveries.async {
            defer { queue.leave() }
            // A child that takes no event for a second is hung or flooded: its calls' deadlines deal with it.
            // Whole or not at all: a torn event would corrupt the call after it.
            guard child.channel.sendWhole(IsolationProtocol.Kind.event.rawValue, sequence: 0, until: .now + .seconds(1), fill: { event.encode(into: &$0) }) == .sent else {
                // Once per episode: a child that died with events queued fails them all at once.
                if queue.drop() {
                    report(HostDiagnostic(.error, code: "event-handler-failed",
                        message: "the event \(name) could not be written to its child within 1 s (it is down, hung or flooded); not delivered, nor the events after it until the queue drains (counted in the snapshot)", plugin: pluginID))
                }
                return
            }
            queues.written.add(1, ordering: .relaxed)
        }
    }

    /// One event the child published was dropped (its queue here was full):
    /// counted, and reported when dropping starts.
    private func droppedPublication() {
        if eventQueues.published.drop() {
            launch.report(HostDiagnostic(.warning, code: "event-dropped",
                message: "it publishes events faster than the host's subscribers take them: past \(eventQueues.published.bound) waiting, its events are dropped (counted in the snapshot) until the queue drains",
                plugin: pluginID))
        }
    }

}
