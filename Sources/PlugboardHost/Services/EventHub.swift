@_spi(PlugboardHost) import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Delivers events between plugins (one hub per host).
///
/// - Order: subscribers run in subscription order, synchronously, on the
///   publishing thread; `publish` returns when all ran.
/// - Isolation: a handler that throws is reported and the others still run.
/// - Cycles: the chain of events being delivered on the current thread is
///   tracked; publishing a name already in the chain (A → B → A), or going
///   deeper than ``maximumDepth``, is not delivered and is reported.
final class EventHub: Sendable {
    static let maximumDepth = 16

    private struct Subscriber: Sendable {
        let id: Int
        let owner: ServiceOwner
        let event: String
        let handler: @Sendable (EventPayload) throws -> Void
    }

    /// Subscribers by event name, in subscription order, and the generations
    /// a reload is staging (subscribed, not delivered to until it commits).
    private let subscribers = Mutex<(next: Int, byEvent: [String: [Subscriber]], staged: Set<ServiceOwner>)>((0, [:], []))
    private let report: @Sendable (HostDiagnostic) -> Void
    private let triggers: ActivationTriggers

    /// The events being delivered on this thread, outermost first: what an
    /// isolated plugin's event carries across, so a cycle through a child
    /// process is still found.
    static var currentChain: [String] { DeliveryStack.current.names }

    /// Runs `body` as if delivering `names` (outermost first), which another
    /// process was delivering when it published.
    static func within<Result>(_ names: [String], _ body: () -> Result) -> Result {
        let stack = DeliveryStack.current
        let saved = stack.names
        stack.names = names
        defer { stack.names = saved }
        return body()
    }

    init(report: @escaping @Sendable (HostDiagnostic) -> Void, triggers: ActivationTriggers = ActivationTriggers()) {
        self.report = report
        self.triggers = triggers
    }

    func subscribe(owner: ServiceOwner, event: String, handler: @escaping @Sendable (EventPayload) throws -> Void) -> EventSubscription {
        let id = subscribers.withLock { state in
            state.next += 1
            state.byEvent[event, default: []].append(Subscriber(id: state.next, owner: owner, event: event, handler: handler))
            return state.next
        }
        return EventSubscription { [weak self] in
            self?.subscribers.withLock { $0.byEvent[event]?.removeAll { $0.id == id } }
        }
    }

    /// Holds back delivery to `owner` (a generation a reload is starting).
    func stage(_ owner: ServiceOwner) { subscribers.withLock { _ = $0.staged.insert(owner) } }

    /// Delivers to `owner` from now on (the reload committed or rolled back).
    func unstage(_ owner: ServiceOwner) { subscribers.withLock { _ = $0.staged.remove(owner) } }

    /// In one step: `old` stops receiving, staged `new` starts.
    func switchOver(from old: ServiceOwner, to new: ServiceOwner) {
        subscribers.withLock { state in
            for event in state.byEvent.keys { state.byEvent[event]!.removeAll { $0.owner == old } }
            state.staged.remove(new)
        }
    }

    /// Drops every subscription of one generation of a plugin (when it is deactivated).
    func removeAll(owner: ServiceOwner) {
        subscribers.withLock { state in
            for event in state.byEvent.keys { state.byEvent[event]!.removeAll { $0.owner == owner } }
        }
    }

    func publish(_ payload: EventPayload, from publisher: ServiceOwner) -> EventDelivery {
        let event = payload.name
        let stack = DeliveryStack.current
        if stack.names.contains(event) || stack.names.count >= Self.maximumDepth {
            let cycle = stack.names + [event]
            report(HostDiagnostic(.error, code: "event-cycle",
                message: "event cycle stopped: \(cycle.joined(separator: " → ")) (published by \(publisher.pluginID)); the last publish was not delivered",
                plugin: publisher.pluginID))
            return EventDelivery(event: event, delivered: 0, failures: [], cycle: cycle)
        }
        // Plugins activated by this event subscribe before it is delivered.
        triggers.beforeEvent(event)
        let targets = subscribers.withLock { state -> [Subscriber] in
            guard let all = state.byEvent[event] else { return [] }
            // Only while a reload stages a generation does delivery filter.
            return state.staged.isEmpty ? all : all.filter { !state.staged.contains($0.owner) }
        }
        if targets.isEmpty { return EventDelivery(event: event, delivered: 0, failures: [], cycle: nil) }
        var delivered = 0
        var failures: [String] = []
        stack.names.append(event)
        defer { stack.names.removeLast() }
        for subscriber in targets {
            do {
                try subscriber.handler(payload)
                delivered += 1
            } catch {
                let message = "\(subscriber.owner.pluginID) failed to handle \(event): \(error)"
                failures.append(message)
                report(HostDiagnostic(.error, code: "event-handler-failed", message: message, plugin: subscriber.owner.pluginID))
            }
        }
        return EventDelivery(event: event, delivered: delivered, failures: failures, cycle: nil)
    }
}

/// The events being delivered on one thread, outermost first. Delivery is
/// synchronous on the publishing thread (handlers run before `publish`
/// returns), so the thread is the chain's scope; one stack per thread, its
/// capacity kept, so a publish allocates nothing for it (a task-local chain
/// cost a node and a task-local push per publish).
final class DeliveryStack {
    var names: [String] = []

    private init() { names.reserveCapacity(EventHub.maximumDepth + 1) }

    /// Released with its thread.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<DeliveryStack>.fromOpaque(pointer).release() }
        }
        return key
    }()

    /// This thread's stack. Never handed to another thread.
    static var current: DeliveryStack {
        if let pointer = pthread_getspecific(key) { return Unmanaged<DeliveryStack>.fromOpaque(pointer).takeUnretainedValue() }
        let stack = DeliveryStack()
        pthread_setspecific(key, Unmanaged.passRetained(stack).toOpaque())
        return stack
    }
}

/// The ``EventBus`` a plugin receives: the hub, labelled with the plugin.
struct PluginEventBus: EventBus {
    let hub: EventHub
    let owner: ServiceOwner

    @discardableResult
    func publish(_ event: EventPayload) -> EventDelivery {
        hub.publish(event, from: owner)
    }

    @discardableResult
    func subscribe(to name: String, _ handler: @escaping @Sendable (EventPayload) throws -> Void) -> EventSubscription {
        hub.subscribe(owner: owner, event: name, handler: handler)
    }
}

/// Who registered a subscription or a route: a plugin, and which of its
/// generations (hot reload stages a new generation beside the live one).
struct ServiceOwner: Sendable, Hashable {
    let pluginID: String
    var generation = 1

    static let host = ServiceOwner(pluginID: "host")
}
