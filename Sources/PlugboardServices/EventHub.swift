@_spi(PlugboardHost) import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// Delivers events between plugins (one hub per host).
///
/// - Order: subscribers run in subscription order, synchronously, on the
///   publishing thread; `publish` returns when all ran.
/// - Isolation: a handler that throws is reported and the others still run.
/// - Cycles: the chain of events being delivered on the current thread is
///   tracked; publishing a name already in the chain (A → B → A), or going
///   deeper than ``maximumDepth``, is not delivered and is reported.
package final class EventHub: Sendable {
    static let maximumDepth = 16

    private struct Subscriber: Sendable {
        let id: Int
        let owner: ServiceOwner
        let handler: Handler
        var type: ObjectIdentifier? = nil
        var typed = TypedHandler.untyped
    }

    /// The subscribers one publish delivers to, in subscription order:
    /// handlers apart from owners, so walking them copies one reference per
    /// subscriber (a `Subscriber` copy retains its strings too); the owner is
    /// read only for a handler that fails.
    /// A typed subscriber (SDK 2.2) also has a type and a typed handler,
    /// which a typed publish of that type calls with the value in place: no
    /// payload. Types are apart from handlers too: reading one retains
    /// nothing (an element copy retains each closure in it).
    private struct Deliverable: Sendable {
        var handlers: ContiguousArray<Handler> = []
        var types: [ObjectIdentifier?] = []
        var typedHandlers: ContiguousArray<TypedHandler> = []
        var owners: [ServiceOwner] = []
        /// The type every subscriber takes, if they all take one: a typed
        /// publish of it needs no payload.
        var sharedType: ObjectIdentifier?
    }

    /// A handler in a struct: an array of bare closures keeps each behind a
    /// reabstraction thunk (a generic container's element is stored at its
    /// most general abstraction), one more call per delivery.
    private struct Handler: Sendable {
        let call: @Sendable (EventPayload) throws -> Void
    }

    private struct TypedHandler: Sendable {
        let call: @Sendable (UnsafeRawPointer) throws -> Void
        /// An untyped subscriber's: its type is nil, so it is never called.
        static let untyped = TypedHandler { _ in }
    }

    /// Subscribers by event name, in subscription order; the generations a
    /// reload is staging (subscribed, not delivered to until it commits);
    /// and what a publish reads, made again on each change (subscriptions
    /// change rarely, publishes often).
    private struct State {
        var next = 0
        var byEvent: [String: [Subscriber]] = [:]
        var staged: Set<ServiceOwner> = []
        var deliverable: [String: Deliverable] = [:]

        mutating func refresh(_ event: String) {
            var made = Deliverable()
            for subscriber in byEvent[event] ?? [] where !staged.contains(subscriber.owner) {
                made.handlers.append(subscriber.handler)
                made.types.append(subscriber.type)
                made.typedHandlers.append(subscriber.typed)
                made.owners.append(subscriber.owner)
            }
            let first = made.types.first ?? nil
            made.sharedType = made.types.allSatisfy { $0 == first } ? first : nil
            deliverable[event] = made.handlers.isEmpty ? nil : made
        }

        mutating func refreshAll() {
            for event in byEvent.keys { refresh(event) }
        }

        mutating func removeAll(where remove: (Subscriber) -> Bool) {
            for event in byEvent.keys { byEvent[event]!.removeAll(where: remove) }
            refreshAll()
        }
    }

    private let subscribers = Mutex(State())
    private let report: @Sendable (HostDiagnostic) -> Void
    private let triggers: ActivationTriggers

    /// The events being delivered on this thread, outermost first: what an
    /// isolated plugin's event carries across, so a cycle through a child
    /// process is still found.
    package static var currentChain: [String] { DeliveryStack.current.names }

    /// Runs `body` as if delivering `names` (outermost first), which another
    /// process was delivering when it published.
    package static func within<Result>(_ names: [String], _ body: () -> Result) -> Result {
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

    package func subscribe(owner: ServiceOwner, event: String, handler: @escaping @Sendable (EventPayload) throws -> Void) -> EventSubscription {
        subscribe(owner: owner, event: event, Handler(call: handler), type: nil, typed: .untyped)
    }

    /// A typed subscriber: `typed` for a typed publish of `type`, `handler`
    /// for any other.
    func subscribe(
        owner: ServiceOwner, event: String, type: ObjectIdentifier,
        typed: @escaping @Sendable (UnsafeRawPointer) throws -> Void, handler: @escaping @Sendable (EventPayload) throws -> Void
    ) -> EventSubscription {
        subscribe(owner: owner, event: event, Handler(call: handler), type: type, typed: TypedHandler(call: typed))
    }

    private func subscribe(
        owner: ServiceOwner, event: String, _ handler: Handler, type: ObjectIdentifier?, typed: TypedHandler
    ) -> EventSubscription {
        let id = subscribers.withLock { state in
            state.next += 1
            let subscriber = Subscriber(id: state.next, owner: owner, handler: handler, type: type, typed: typed)
            state.byEvent[event, default: []].append(subscriber)
            state.refresh(event)
            return state.next
        }
        return EventSubscription { [weak self] in
            self?.subscribers.withLock { state in
                state.byEvent[event]?.removeAll { $0.id == id }
                state.refresh(event)
            }
        }
    }

    /// Holds back delivery to `owner` (a generation a reload is starting).
    func stage(_ owner: ServiceOwner) {
        subscribers.withLock { state in
            state.staged.insert(owner)
            state.refreshAll()
        }
    }

    /// Delivers to `owner` from now on (the reload committed or rolled back).
    func unstage(_ owner: ServiceOwner) {
        subscribers.withLock { state in
            state.staged.remove(owner)
            state.refreshAll()
        }
    }

    /// In one step: `old` stops receiving, staged `new` starts.
    func switchOver(from old: ServiceOwner, to new: ServiceOwner) {
        subscribers.withLock { state in
            state.staged.remove(new)
            state.removeAll { $0.owner == old }
        }
    }

    /// Drops every subscription of one generation of a plugin (when it is deactivated).
    func removeAll(owner: ServiceOwner) {
        subscribers.withLock { state in state.removeAll { $0.owner == owner } }
    }

    package func publish(_ payload: EventPayload, from publisher: ServiceOwner) -> EventDelivery {
        deliver(payload.name, typed: nil, payload: { payload }, from: publisher)
    }

    /// A typed publish: the value at `value`, of the type `type` names.
    func publish(
        _ event: String, type: ObjectIdentifier, value: UnsafeRawPointer, payload: () -> EventPayload, from publisher: ServiceOwner
    ) -> EventDelivery {
        deliver(event, typed: (type, value), payload: payload, from: publisher)
    }

    /// Subscribers of the typed value's own type get it in place; the others
    /// get the payload, made once, only if there are any.
    private func deliver(
        _ event: String, typed: (type: ObjectIdentifier, value: UnsafeRawPointer)?, payload make: () -> EventPayload,
        from publisher: ServiceOwner
    ) -> EventDelivery {
        let stack = DeliveryStack.current
        if stack.isDelivering(event) {
            let cycle = stack.names + [event]
            report(HostDiagnostic(.error, code: "event-cycle",
                message: "event cycle stopped: \(cycle.joined(separator: " → ")) (published by \(publisher.pluginID)); the last publish was not delivered",
                plugin: publisher.pluginID))
            return EventDelivery(event: event, delivered: 0, failures: [], cycle: cycle)
        }
        // Plugins activated by this event subscribe before it is delivered.
        triggers.beforeEvent(event, from: publisher)
        guard let targets = subscribers.withLock({ $0.deliverable[event] }) else {
            return EventDelivery(event: event, delivered: 0, failures: [], cycle: nil)
        }
        var delivered = 0
        var failures: [String] = []
        func attempt(_ index: Int, _ call: () throws -> Void) {
            do {
                try call()
                delivered += 1
            } catch let error as EventNotQueued {
                failures.append(error.description)
            } catch {
                let owner = targets.owners[index]
                let message = "\(owner.pluginID) failed to handle \(event): \(error)"
                failures.append(message)
                report(HostDiagnostic(.error, code: "event-handler-failed", message: message, plugin: owner.pluginID))
            }
        }
        stack.push(event)
        defer { stack.pop() }
        // Three loops, so the common ones test nothing per subscriber: all
        // of the value's type (in place, no payload); none of it (the
        // payload, made once); a mix.
        if let typed, typed.type == targets.sharedType {
            let handlers = targets.typedHandlers
            for index in handlers.indices { attempt(index) { try handlers[index].call(typed.value) } }
        } else if let typed, targets.sharedType == nil, targets.types.contains(typed.type) {
            let payload = make()
            let handlers = targets.handlers, typedHandlers = targets.typedHandlers, types = targets.types
            for index in handlers.indices {
                if types[index] == typed.type {
                    attempt(index) { try typedHandlers[index].call(typed.value) }
                } else {
                    attempt(index) { try handlers[index].call(payload) }
                }
            }
        } else {
            let payload = make()
            let handlers = targets.handlers
            for index in handlers.indices { attempt(index) { try handlers[index].call(payload) } }
        }
        return EventDelivery(event: event, delivered: delivered, failures: failures, cycle: nil)
    }
}

/// A subscriber's queue was full: the event was not delivered. The queue's
/// owner counts it and reports once per episode, so a flood costs one
/// diagnostic, not one per event.
package struct EventNotQueued: Error, CustomStringConvertible {
    package let description: String

    package init(description: String) {
        self.description = description
    }
}

/// The events being delivered on one thread, outermost first. Delivery is
/// synchronous on the publishing thread (handlers run before `publish`
/// returns), so the thread is the chain's scope; one stack per thread, its
/// capacity kept, so a publish allocates nothing for it (a task-local chain
/// cost a node and a task-local push per publish).
final class DeliveryStack {
    /// The names, behind a pointer rather than in a stored `var`: a class's
    /// stored property is checked for exclusive access at run time on every
    /// push and pop (two runtime calls each); one thread only ever touches
    /// this stack, so there is nothing for the check to find.
    private let storage: UnsafeMutablePointer<[String]>

    var names: [String] {
        get { storage.pointee }
        set { storage.pointee = newValue }
    }

    /// Whether publishing `name` now closes a cycle, or goes too deep.
    func isDelivering(_ name: String) -> Bool {
        storage.pointee.count >= EventHub.maximumDepth || storage.pointee.contains(name)
    }

    func push(_ name: String) { storage.pointee.append(name) }
    func pop() { storage.pointee.removeLast() }

    private init() {
        storage = .allocate(capacity: 1)
        storage.initialize(to: [])
        storage.pointee.reserveCapacity(EventHub.maximumDepth + 1)
    }

    deinit { storage.deinitialize(count: 1); storage.deallocate() }

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

/// The ``EventBus`` a plugin receives (handed out as its
/// `directEventBus()`): the hub, labelled with the plugin. A class, so the
/// bus around it holds one reference (a 32-byte struct would be boxed).
final class PluginEventBus: TypedEventHub {
    let hub: EventHub
    let owner: ServiceOwner

    init(hub: EventHub, owner: ServiceOwner) {
        self.hub = hub
        self.owner = owner
    }

    @discardableResult
    func publish(_ event: EventPayload) -> EventDelivery {
        hub.publish(event, from: owner)
    }

    @discardableResult
    func subscribe(to name: String, _ handler: @escaping @Sendable (EventPayload) throws -> Void) -> EventSubscription {
        hub.subscribe(owner: owner, event: name, handler: handler)
    }

    func publish(named name: String, type: ObjectIdentifier, value: UnsafeRawPointer, payload: () -> EventPayload) -> EventDelivery {
        hub.publish(name, type: type, value: value, payload: payload, from: owner)
    }

    func subscribe(
        to name: String, type: ObjectIdentifier,
        typed: @escaping @Sendable (UnsafeRawPointer) throws -> Void,
        _ handler: @escaping @Sendable (EventPayload) throws -> Void
    ) -> EventSubscription {
        hub.subscribe(owner: owner, event: name, type: type, typed: typed, handler: handler)
    }
}

/// Who registered a subscription or a route: a plugin, and which of its
/// generations (hot reload stages a new generation beside the live one).
package struct ServiceOwner: Sendable, Hashable {
    let pluginID: String
    var generation = 1

    package init(pluginID: String, generation: Int = 1) {
        self.pluginID = pluginID
        self.generation = generation
    }

    package static let host = ServiceOwner(pluginID: "host")
}
