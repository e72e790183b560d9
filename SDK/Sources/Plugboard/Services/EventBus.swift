import Synchronization

/// An event one plugin publishes and others receive, without importing each
/// other: the event travels under its ``name`` through `Codable`, and each
/// subscriber decodes it into its own type with the same name and shape
/// (numbers may change type where the value fits, as in JSON).
///
/// ```swift
/// struct CouponApplied: PluginEvent {
///     static let name = "coupon.applied"
///     let code: String
///     let percentOff: Int
/// }
/// ```
public protocol PluginEvent: Codable, Sendable {
    /// The name subscribers know the event by, such as `coupon.applied`.
    static var name: String { get }
}

/// Publishing and subscribing through the host.
///
/// Delivery is synchronous: ``publish(_:)`` returns after every subscriber
/// ran, on the publishing thread, in the order they subscribed. A handler that
/// throws (or cannot decode the event) is reported and the others still run.
/// A handler that publishes an event already being delivered in the same
/// chain (A → B → A) is a cycle: that publish is not delivered, and the cycle
/// is reported.
public protocol EventBus: Sendable {
    /// Delivers `event` to every subscriber of its name.
    @discardableResult
    func publish(_ event: EventPayload) -> EventDelivery
    /// Calls `handler` with every event named `name`.
    @discardableResult
    func subscribe(to name: String, _ handler: @escaping @Sendable (EventPayload) throws -> Void) -> EventSubscription
}

// The typed entry points are inlinable: specialised in the plugin or host
// that calls them, a delivery to a subscriber of the publisher's type needs
// no generic metadata lookup and no value-witness calls.
// A plugin calls them on `any EventBus`, which cannot be specialised: so the
// subscriber's closure is made by `EventPayload.handler(delivering:)`,
// generic over the event alone (a closure made here would be generic over
// the bus as well, and stay unspecialised in the plugin); on the host's bus
// (SDK 2.2), `DirectEventBus.deliver` and `listen` are, for the same reason.
extension EventBus {
    /// Publishes a typed event.
    @discardableResult
    @inlinable @inline(__always)
    public func publish<Event: PluginEvent>(_ event: Event) -> EventDelivery {
        // The host's bus (SDK 2.2) hands the value to subscribers of its type
        // in place: no payload is made for them (two allocations).
        if let direct = DirectEventBus.of(self) { return direct.deliver(event) }
        return publish(EventPayload(event))
    }

    /// Subscribes to a typed event. A subscriber of the very same Swift type
    /// as the publisher gets the value as is; any other decodes the JSON.
    @discardableResult
    @inlinable @inline(__always)
    public func subscribe<Event: PluginEvent>(
        _ type: Event.Type, _ handler: @escaping @Sendable (Event) throws -> Void
    ) -> EventSubscription {
        if let direct = DirectEventBus.of(self) { return direct.listen(handler) }
        return subscribe(to: Event.name, EventPayload.handler(delivering: handler))
    }
}

/// One published event: its name and its value, or its JSON when it came
/// from another process (an isolated plugin).
///
/// A subscriber of the publisher's own Swift type gets the value itself,
/// found by comparing types (no dynamic cast, no copy). A subscriber of
/// another type (another plugin's copy of the event) gets it decoded, once
/// per subscriber type and publish however many subscribers share that
/// type, from an encoding made at most once per publish: a compact binary
/// one within the process, JSON across processes. ``json()`` encodes the
/// JSON when asked, once.
public final class EventPayload: Sendable {
    /// The event's name (``PluginEvent/name`` of its type).
    public let name: String
    /// The published value in a box of its exact type; nil for raw JSON.
    @usableFromInline let box: (any EventValueBox)?
    @usableFromInline let encoded: Mutex<Result<[UInt8], EncodingFailure>?>
    /// Values decoded for other types, by Swift type (and the compact
    /// encoding they were decoded from).
    @usableFromInline let decoded: Mutex<[ObjectIdentifier: any Sendable]>

    /// An event carrying a typed value.
    @inlinable @inline(__always)
    public init<Event: PluginEvent>(_ event: Event) {
        name = Event.name
        box = TypedEventBox(event)
        encoded = Mutex(nil)
        decoded = Mutex([:])
    }

    /// An event carrying raw JSON.
    public init(name: String, json: [UInt8]) {
        self.name = name
        box = nil
        encoded = Mutex(.success(json))
        decoded = Mutex([:])
    }

    /// The event as JSON.
    public func json() throws -> [UInt8] {
        let result = encoded.withLock { cached in
            if let cached { return cached }
            let fresh: Result<[UInt8], EncodingFailure>
            do {
                // A payload without a box was made from JSON and is always cached.
                fresh = .success(try box?.encode() ?? [])
            } catch {
                fresh = .failure(EncodingFailure(message: "\(error)"))
            }
            cached = fresh
            return fresh
        }
        return try result.get()
    }

    /// The event as `Event`: the value itself when it has that very type,
    /// otherwise decoded (throws if the shapes differ).
    @inlinable @inline(__always)
    public func decode<Event: PluginEvent>(_ type: Event.Type) throws -> Event {
        // The box's own class, read from the object: no call (SDK 2.0 and 2.1
        // asked the box for its type).
        if let box, ObjectIdentifier(Swift.type(of: box)) == ObjectIdentifier(TypedEventBox<Event>.self) {
            // The box is a TypedEventBox<Event>.
            return unsafeDowncast(box, to: TypedEventBox<Event>.self).value
        }
        // Another subscriber of this type decoded it already (SDK 2.2: read
        // here, specialized, rather than in the SDK's generic code).
        if let decodedBefore = decodedValue(as: Event.self) { return decodedBefore }
        return try decodeJSON(type)
    }

    /// The value decoded before for `Stored`, if any: its key is the type,
    /// so it is read as that type without a dynamic cast. Plugins built
    /// against SDK 2.2 inline this: whatever is kept in `decoded` under
    /// `ObjectIdentifier(T.self)` must be a `T`, in every later SDK.
    @inlinable @inline(__always)
    func decodedValue<Stored>(as type: Stored.Type) -> Stored? {
        let key = ObjectIdentifier(Stored.self)
        let stored = decoded.withLock { values -> (any Sendable)? in
            // Mostly one other type decodes an event: its entry is compared
            // without hashing the key.
            if values.count == 1, let only = values.first { return only.key == key ? only.value : nil }
            return values[key]
        }
        guard let stored else { return nil }
        return Self.value(stored, as: type)
    }

    /// `value` (an opened `any Sendable`) as `Wanted`, or nil if it is not
    /// one: a comparison of types, where `as?` walks the runtime's casts.
    @inlinable @inline(__always)
    static func value<Held, Wanted>(_ value: Held, as type: Wanted.Type) -> Wanted? {
        Held.self == Wanted.self ? unsafeBitCast(value, to: Wanted.self) : nil
    }

    /// What a typed subscriber is called with: the payload, handed on as
    /// `Event` (SDK 2.2; subscribers built against 2.0 and 2.1 made this
    /// closure in their own code, and still work).
    @inlinable
    static func handler<Event: PluginEvent>(
        delivering handler: @escaping @Sendable (Event) throws -> Void
    ) -> @Sendable (EventPayload) throws -> Void {
        { payload in try handler(try payload.decode(Event.self)) }
    }

    /// The other plugins' path, once per type: a value published in this
    /// process crosses to the subscriber's type through the compact coder;
    /// raw JSON (from an isolated plugin) is decoded as JSON. Plugins built
    /// against SDK 2.0 and 2.1 call this for every subscriber of another
    /// type: keep its name and signature.
    @usableFromInline
    func decodeJSON<Event: PluginEvent>(_ type: Event.Type) throws -> Event {
        if let decodedBefore = decodedValue(as: Event.self) { return decodedBefore }
        let value = try decodedCompact(type) ?? JSONCoding.decode(type, from: try json())
        remember(value, under: ObjectIdentifier(Event.self))
        return value
    }

    /// The published value crossed to `Event` by the compact coder; nil for
    /// raw JSON, and where the compact coding does not fit `Event`. JSON's
    /// rules then, as across processes: Foundation's coders write some types
    /// apart from their `Codable` shapes (`URL` and `Data` as strings,
    /// `Decimal` and `Float` as decimal numbers), so one plugin's `URL` may
    /// be another's `String`.
    @inline(__always)
    private func decodedCompact<Event: PluginEvent>(_ type: Event.Type) throws -> Event? {
        guard let box = box as? any CompactEncodableBox else { return nil }
        let kept = decodedValue(as: CompactBytes.self)?.bytes
        let bytes = try kept ?? box.encodeCompact()
        let value: Event?
        do {
            value = try CompactDecoder().decode(type, from: bytes)
        } catch is DecodingError {
            value = nil
        }
        // Kept for the next subscriber type only once a second type asks, or
        // this one did not fit (its other subscribers fail the same way): a
        // table entry costs about a tenth of an encode, and most events have
        // one other type.
        if kept == nil, value == nil || !decoded.withLock({ $0.isEmpty }) {
            remember(CompactBytes(bytes: bytes), under: ObjectIdentifier(CompactBytes.self))
        }
        return value
    }

    /// Keeps a decoded value (or the compact bytes) for the other
    /// subscribers of this publish.
    private func remember(_ value: any Sendable, under key: ObjectIdentifier) {
        decoded.withLock { $0[key] = value }
    }

    /// The compact bytes, under a type of their own (the key of a stored value is its type).
    private struct CompactBytes: Sendable {
        let bytes: [UInt8]
    }

    @usableFromInline
    struct EncodingFailure: Error, CustomStringConvertible {
        let message: String
        @usableFromInline var description: String { message }
    }
}

/// A published value, boxed with its exact type so subscribers of that type
/// get it back without a dynamic cast.
@usableFromInline
protocol EventValueBox: AnyObject, Sendable {
    /// Read by the inlined `decode` of plugins built against SDK 2.0 and 2.1
    /// (2.2 reads the box's class instead): keep it.
    var type: ObjectIdentifier { get }
    func encode() throws -> [UInt8]
}

@usableFromInline
final class TypedEventBox<Event: PluginEvent>: EventValueBox {
    @usableFromInline let value: Event
    @inlinable init(_ value: Event) { self.value = value }
    @usableFromInline var type: ObjectIdentifier { ObjectIdentifier(Event.self) }
    @usableFromInline func encode() throws -> [UInt8] { try JSONCoding.encode(value) }
}

/// A box whose value the compact coder can encode. Apart from
/// ``EventValueBox``, whose requirements plugins' inlined code was built
/// against, so that this one can change with the SDK.
protocol CompactEncodableBox: EventValueBox {
    func encodeCompact() throws -> [UInt8]
}

extension TypedEventBox: CompactEncodableBox {
    func encodeCompact() throws -> [UInt8] { try CompactEncoder().encode(value) }
}

/// What happened to one publish.
public struct EventDelivery: Sendable, Equatable {
    /// The name of the published event.
    public let event: String
    /// Subscribers whose handler ran without error.
    public let delivered: Int
    /// One message per handler that failed.
    public let failures: [String]
    /// The chain of event names when this publish closed a cycle (not delivered).
    public let cycle: [String]?

    /// Made by event buses (a host's, or a test's).
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

    /// Stops delivery to this subscription's handler; calling it again does nothing.
    public func cancel() { onCancel() }
}
