import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Notices from the child (log records, subscriptions, publications,
/// diagnostics) and the events the host forwards to it.
extension IsolatedPlugin {
    /// A notice from the child's notice pipe (on the thread draining it).
    func handle(_ notice: ChildNotice) {
        switch notice {
        case let .log(level, message):
            HostLogger(label: pluginID, sink: launch.logSink).log(level, message)
        case let .subscribe(name):
            subscribe(name)
        case let .publish(event):
            _ = EventHub.within(event.chain) {
                launch.eventHub.publish(event.payload, from: ServiceOwner(pluginID: pluginID, generation: generation))
            }
        case let .diagnostic(diagnostic):
            launch.report(HostDiagnostic(diagnostic.error ? .error : .warning, code: .init(diagnostic.code), message: diagnostic.message,
                                         file: diagnostic.keyPath == nil ? nil : launch.request.settingsFile, keyPath: diagnostic.keyPath, plugin: pluginID))
        }
    }

    /// Forwards the host's `name` events to the child from now on (once per name).
    func subscribe(_ name: String) {
        guard subscribed.withLock({ $0.insert(name).inserted }) else { return }
        _ = launch.eventHub.subscribe(owner: ServiceOwner(pluginID: pluginID, generation: generation), event: name) { [weak self] payload in
            try self?.deliver(payload)
        }
    }

    /// Sends an event to the child without waiting: its handlers run there,
    /// after any call in progress. Throws (a failed delivery, with a
    /// diagnostic) when the child is down or its request pipe is full.
    func deliver(_ payload: EventPayload) throws(IsolatedCallError) {
        guard let child = state.withLock({ $0.phase == .running ? $0.child : nil }) else {
            throw IsolatedCallError(.pluginUnavailable, pluginID: pluginID, message: "its child is not running; the event was not delivered")
        }
        let json: [UInt8]
        do {
            json = try payload.json()
        } catch {
            throw IsolatedCallError(.pluginThrew, pluginID: pluginID, message: "the event cannot be encoded: \(error)")
        }
        // Called while the hub delivers this event: the chain includes it.
        let event = CrossingEvent(name: payload.name, chain: EventHub.currentChain, json: json)
        let sent = child.channel.send(IsolationProtocol.Kind.event.rawValue, sequence: 0, until: .now) { event.encode(into: &$0) }
        guard sent else {
            throw IsolatedCallError(.pluginUnavailable, pluginID: pluginID, message: "its request pipe is full (the child is busy or hung); the event was not delivered")
        }
    }

}
