import Dispatch
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
            // While it starts, its subscriptions come with the start reply;
            // after it stopped, nobody may subscribe in its name.
            if state.withLock({ $0.phase == .running }) { subscribe(name) }
        case let .publish(event):
            // Not on this thread: subscribers run host code that may call
            // this plugin, and the child's pipes must keep being read.
            let owner = ServiceOwner(pluginID: pluginID, generation: generation)
            let hub = launch.eventHub
            publications.async {
                _ = EventHub.within(event.chain) { hub.publish(event.payload, from: owner) }
            }
        case let .diagnostic(diagnostic):
            launch.report(HostDiagnostic(diagnostic.error ? .error : .warning, code: .init(diagnostic.code), message: diagnostic.message,
                                         file: diagnostic.keyPath == nil ? nil : launch.request.settingsFile, keyPath: diagnostic.keyPath, plugin: pluginID))
        case .storage:
            // Answered by the thread that drains the child's notices (ChildOutput).
            break
        }
    }

    /// A sandboxed child's storage write, made here in its folder with the
    /// host's quota (a plain child writes its folder itself).
    func store(_ request: StorageRelay.Request) -> StorageRelay.Answer {
        guard launch.request.sandbox != nil, let root = launch.request.dataDirectory else {
            return StorageRelay.Answer(ServiceError(.storageNotWritable, "this plugin's storage writes are not made by the host"))
        }
        let quota = launch.request.quota
        let report = launch.report, id = pluginID
        let store = FileKeyValueStore(
            root: root, folder: pluginID,
            quota: quota.count == 3 ? StorageQuota(maximumBytes: quota[0], maximumKeys: quota[1], maximumValueBytes: quota[2]) : StorageQuota()
        ) { error in report(HostDiagnostic(.warning, code: .init(error.code.rawValue), message: error.message, plugin: id)) }
        return StorageRelay.perform(request, in: store)
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

    /// Sends an event to the child without waiting: its handlers run there,
    /// after any call in progress. Throws (a failed delivery, with a
    /// diagnostic) when the child is down, its request pipe has no room for
    /// the whole event, or a call is being written to it at that moment.
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
        guard child.channel.sendIfRoom(IsolationProtocol.Kind.event.rawValue, sequence: 0, fill: { event.encode(into: &$0) }) else {
            throw IsolatedCallError(.pluginUnavailable, pluginID: pluginID,
                message: "its request pipe has no room for the event now (the child is busy, hung, or taking a large call); the event was not delivered")
        }
    }

}
