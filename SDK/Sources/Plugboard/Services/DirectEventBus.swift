/// The host's side of a bus that can deliver a typed value in place (SDK 2.2).
///
/// A host implements it and hands plugins ``directEventBus()``: a typed
/// publish through that bus reaches subscribers of the publisher's own Swift
/// type with a pointer to the value, and makes an ``EventPayload`` (two
/// allocations) once, only if a subscriber of another type, or an untyped
/// one, needs it. Not a plugin's API.
@_spi(PlugboardHost)
public protocol TypedEventHub: EventBus {
    /// Delivers the value at `value`, of the type `type` identifies and named
    /// `name`: subscribers of that type get the value itself through their
    /// typed handler (the pointer is valid during the call only); the others
    /// get `payload()`, made at most once.
    func publish(
        named name: String, type: ObjectIdentifier, value: UnsafeRawPointer, payload: () -> EventPayload
    ) -> EventDelivery

    /// Subscribes to `name` with both ways to deliver: `typed` for a value of
    /// the type `type` identifies, `handler` for a payload.
    func subscribe(
        to name: String, type: ObjectIdentifier,
        typed: @escaping @Sendable (UnsafeRawPointer) throws -> Void,
        _ handler: @escaping @Sendable (EventPayload) throws -> Void
    ) -> EventSubscription
}

extension TypedEventHub {
    /// The bus to hand a plugin: the typed entry points of ``EventBus``,
    /// inlined in the plugin, find it by its type and deliver in place.
    @_spi(PlugboardHost)
    public func directEventBus() -> any EventBus { DirectEventBus(self) }
}

/// The bus a host's ``TypedEventHub`` is handed out in. Its type is what
/// the inlined typed entry points compare with (a comparison of two
/// pointers, where a cast to a protocol takes about 50 ns); they then call
/// the two methods below. Plugins built against SDK 2.2 inline those
/// calls: keep this class's name and both methods' names and signatures.
@usableFromInline
final class DirectEventBus: EventBus {
    private let hub: any TypedEventHub

    init(_ hub: any TypedEventHub) { self.hub = hub }

    // Witnesses of a public protocol's requirements: the compiler asks for
    // @usableFromInline on a @usableFromInline class's witnesses.
    @usableFromInline
    func publish(_ event: EventPayload) -> EventDelivery { hub.publish(event) }

    @usableFromInline
    func subscribe(to name: String, _ handler: @escaping @Sendable (EventPayload) throws -> Void) -> EventSubscription {
        hub.subscribe(to: name, handler)
    }

    @usableFromInline
    func publish(named name: String, type: ObjectIdentifier, value: UnsafeRawPointer, payload: () -> EventPayload) -> EventDelivery {
        hub.publish(named: name, type: type, value: value, payload: payload)
    }

    @usableFromInline
    func subscribe(
        to name: String, type: ObjectIdentifier,
        typed: @escaping @Sendable (UnsafeRawPointer) throws -> Void,
        _ handler: @escaping @Sendable (EventPayload) throws -> Void
    ) -> EventSubscription {
        hub.subscribe(to: name, type: type, typed: typed, handler)
    }

    /// A typed publish: subscribers of `Event` get the value in place, the
    /// others a payload made at most once.
    @inlinable @inline(__always)
    func deliver<Event: PluginEvent>(_ event: Event) -> EventDelivery {
        withUnsafePointer(to: event) { value in
            publish(named: Event.name, type: ObjectIdentifier(Event.self), value: UnsafeRawPointer(value)) { EventPayload(event) }
        }
    }

    /// A typed subscription, with the payload handler for publishes of other
    /// types (and of plugins built against SDK 2.0 and 2.1).
    @inlinable @inline(__always)
    func listen<Event: PluginEvent>(_ handler: @escaping @Sendable (Event) throws -> Void) -> EventSubscription {
        subscribe(
            to: Event.name, type: ObjectIdentifier(Event.self),
            typed: { value in try handler(value.assumingMemoryBound(to: Event.self).pointee) },
            EventPayload.handler(delivering: handler))
    }

    /// `bus` as this class when it is one: its type compared, no dynamic cast.
    @inlinable @inline(__always)
    static func of<Bus: EventBus>(_ bus: Bus) -> DirectEventBus? {
        ObjectIdentifier(Bus.self) == ObjectIdentifier(DirectEventBus.self) ? unsafeBitCast(bus, to: DirectEventBus?.self) : nil
    }
}
