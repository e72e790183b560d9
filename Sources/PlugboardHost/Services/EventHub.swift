@_spi(PlugboardHost) import Plugboard
import Synchronization

/// Delivers events between plugins (one hub per host).
///
/// - Order: subscribers run in subscription order, synchronously, on the
///   publishing thread; `publish` returns when all ran.
/// - Isolation: a handler that throws is reported and the others still run.
/// - Cycles: the chain of events being delivered on the current task is
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

    /// The events being delivered on this task, innermost first (a list of
    /// nodes, so entering a delivery allocates one node, not a new array).
    @TaskLocal private static var chain: DeliveryChain?

    /// The events being delivered on this task, outermost first: what an
    /// isolated plugin's event carries across, so a cycle through a child
    /// process is still found.
    static var currentChain: [String] { chain?.names.reversed() ?? [] }

    /// Runs `body` as if delivering `names` (outermost first), which another
    /// process was delivering when it published.
    static func within<Result>(_ names: [String], _ body: () -> Result) -> Result {
        var node: DeliveryChain?
        for name in names { node = DeliveryChain(name, parent: node) }
        return $chain.withValue(node, operation: body)
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
        let chain = Self.chain
        if let chain, chain.contains(event) || chain.depth >= Self.maximumDepth {
            let cycle = chain.names.reversed() + [event]
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
        Self.$chain.withValue(DeliveryChain(event, parent: chain)) {
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
        }
        return EventDelivery(event: event, delivered: delivered, failures: failures, cycle: nil)
    }
}

/// One event in the chain being delivered, with the one that published it.
final class DeliveryChain: Sendable {
    let event: String
    let parent: DeliveryChain?
    /// Events in the chain, this one included.
    let depth: Int

    init(_ event: String, parent: DeliveryChain?) {
        self.event = event
        self.parent = parent
        depth = (parent?.depth ?? 0) + 1
    }

    func contains(_ name: String) -> Bool {
        var node: DeliveryChain? = self
        while let current = node {
            if current.event == name { return true }
            node = current.parent
        }
        return false
    }

    /// The events, innermost first.
    var names: [String] {
        var out: [String] = []
        var node: DeliveryChain? = self
        while let current = node {
            out.append(current.event)
            node = current.parent
        }
        return out
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
