/// An event one plugin publishes and others receive, without importing each
/// other: the event travels as JSON under its ``name``, and each subscriber
/// decodes it into its own type with the same name and shape.
///
/// ```swift
/// struct CouponApplied: PluginEvent {
///     static let name = "coupon.applied"
///     let code: String
///     let percentOff: Int
/// }
/// ```
public protocol PluginEvent: Codable, Sendable {
    static var name: String { get }
}

/// Publishing and subscribing through the host.
///
/// Delivery is synchronous: ``publish(name:payload:)`` returns after every
/// subscriber ran, on the publishing thread, in the order they subscribed.
/// A handler that throws (or cannot decode the event) is reported and the
/// others still run. A handler that publishes an event already being
/// delivered in the same chain (A → B → A) is a cycle: that publish is not
/// delivered, and the cycle is reported.
public protocol EventBus: Sendable {
    /// Delivers raw JSON `payload` under `name` to every subscriber.
    @discardableResult
    func publish(name: String, payload: [UInt8]) -> EventDelivery
    /// Calls `handler` with the raw JSON of every event named `name`.
    @discardableResult
    func subscribe(to name: String, _ handler: @escaping @Sendable ([UInt8]) throws -> Void) -> EventSubscription
}

extension EventBus {
    /// Publishes a typed event.
    @discardableResult
    public func publish<Event: PluginEvent>(_ event: Event) -> EventDelivery {
        do {
            return publish(name: Event.name, payload: try JSONCoding.encode(event))
        } catch {
            return EventDelivery(event: Event.name, delivered: 0, failures: ["cannot encode \(Event.name): \(error)"], cycle: nil)
        }
    }

    /// Subscribes to a typed event.
    @discardableResult
    public func subscribe<Event: PluginEvent>(
        _ type: Event.Type, _ handler: @escaping @Sendable (Event) throws -> Void
    ) -> EventSubscription {
        subscribe(to: Event.name) { payload in try handler(try JSONCoding.decode(Event.self, from: payload)) }
    }
}

/// What happened to one publish.
public struct EventDelivery: Sendable, Equatable {
    public let event: String
    /// Subscribers whose handler ran without error.
    public let delivered: Int
    /// One message per handler that failed.
    public let failures: [String]
    /// The chain of event names when this publish closed a cycle (not delivered).
    public let cycle: [String]?

    public init(event: String, delivered: Int, failures: [String], cycle: [String]?) {
        self.event = event
        self.delivered = delivered
        self.failures = failures
        self.cycle = cycle
    }
}

/// A subscription; ``cancel()`` stops delivery. Subscriptions of a plugin
/// end when it is deactivated.
public final class EventSubscription: Sendable {
    private let onCancel: @Sendable () -> Void

    @_spi(PlugboardHost)
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    public func cancel() { onCancel() }
}
