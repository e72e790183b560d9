import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What an isolated child tells the host outside calls, on a pipe of its
/// own that a host thread reads all the time: log records, event
/// subscriptions and publications, diagnostics. Each is a 4-byte
/// little-endian length (of what follows), a kind byte and its payload.
enum ChildNotice {
    case log(LogLevel, String)
    /// The plugin subscribed to an event (the host forwards it from then on).
    case subscribe(String)
    /// The plugin published an event.
    case publish(CrossingEvent)
    /// A diagnostic of the child's services (a configuration override, a quota).
    case diagnostic(IsolationProtocol.Diagnostic)

    /// Longer log messages are cut.
    static let maximumMessage = 3_000
    /// A longer notice is not one this program wrote: the reader stops.
    static let maximumLength = 16 << 20

    var encoded: [UInt8] {
        var body: [UInt8] = []
        switch self {
        case let .log(level, message):
            body = [1, UInt8(level.rawValue)] + Array(message.utf8.prefix(Self.maximumMessage))
        case let .subscribe(name):
            body = [2] + Array(name.utf8)
        case let .publish(event):
            body = [3]
            event.encode(into: &body)
        case let .diagnostic(diagnostic):
            body = [4] + ((try? CompactEncoder().encode(diagnostic)) ?? [])
        }
        var frame: [UInt8] = []
        withUnsafeBytes(of: UInt32(body.count).littleEndian) { frame += $0 }
        return frame + body
    }

    /// Hands over each whole notice in `buffer` and removes it; false when
    /// the buffer holds something no child writes (the reader stops reading).
    static func take(from buffer: inout [UInt8], _ body: (ChildNotice) -> Void) -> Bool {
        var start = 0
        defer { buffer.removeFirst(start) }
        while buffer.count - start >= 5 {
            let length = Int(buffer[start]) | Int(buffer[start + 1]) << 8 | Int(buffer[start + 2]) << 16 | Int(buffer[start + 3]) << 24
            guard length >= 1, length <= maximumLength else { return false }
            guard buffer.count - start >= 4 + length else { break }
            let payload = buffer[(start + 5)..<(start + 4 + length)]
            start += 4 + length
            switch buffer[start - length] {
            case 1 where !payload.isEmpty:
                body(.log(LogLevel(rawValue: Int(payload[payload.startIndex])) ?? .info,
                          String(decoding: payload.dropFirst(), as: UTF8.self)))
            case 2: body(.subscribe(String(decoding: payload, as: UTF8.self)))
            case 3:
                guard let event = CrossingEvent(payload) else { return false }
                body(.publish(event))
            case 4:
                guard let diagnostic = try? CompactDecoder().decode(IsolationProtocol.Diagnostic.self, from: payload) else { return false }
                body(.diagnostic(diagnostic))
            default: return false
            }
        }
        return true
    }
}

/// An event crossing between host and child: its name, the chain of
/// events being delivered when it was published (for cycle detection on
/// the other side), and its JSON. Encoded as two length-prefixed strings
/// (the chain's names joined by NUL) and the JSON.
struct CrossingEvent {
    let name: String
    let chain: [String]
    let json: [UInt8]

    init(name: String, chain: [String], json: [UInt8]) {
        self.name = name
        self.chain = chain
        self.json = json
    }

    init?(_ bytes: ArraySlice<UInt8>) {
        var rest = bytes
        func string() -> String? {
            guard rest.count >= 4 else { return nil }
            let base = rest.startIndex
            let count = Int(rest[base]) | Int(rest[base + 1]) << 8 | Int(rest[base + 2]) << 16 | Int(rest[base + 3]) << 24
            guard rest.count >= 4 + count else { return nil }
            defer { rest = rest.dropFirst(4 + count) }
            return String(decoding: rest.dropFirst(4).prefix(count), as: UTF8.self)
        }
        guard let name = string(), let chain = string() else { return nil }
        self.name = name
        self.chain = chain.isEmpty ? [] : chain.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        json = Array(rest)
    }

    func encode(into bytes: inout [UInt8]) {
        for text in [name, chain.joined(separator: "\u{0}")] {
            withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian) { bytes += $0 }
            bytes += text.utf8
        }
        bytes += json
    }

    var payload: EventPayload { EventPayload(name: name, json: json) }
}

/// The child's end of the notice pipe: one write per notice, under a lock,
/// so notices of several threads never interleave.
final class ChildNoticeWriter: Sendable {
    let fd: Int32
    private let writing = Mutex(())
    /// Event names announced to the host, so each is announced once.
    private let announced = Mutex<Set<String>>([])

    init(fd: Int32) { self.fd = fd }

    /// Announces a subscription to `name`, the first time only.
    func announce(_ name: String) {
        if announced.withLock({ $0.insert(name).inserted }) { send(.subscribe(name)) }
    }

    var announcedNames: [String] { announced.withLock { $0.sorted() } }

    func send(_ notice: ChildNotice) {
        let bytes = notice.encoded
        writing.withLock { _ in _ = bytes.withUnsafeBytes { writeAll(fd, $0) } }
    }
}

/// The event bus an isolated plugin gets: its subscriptions are kept in the
/// child (handlers run there) and announced to the host, which forwards
/// matching events; what it publishes goes to the host's bus. Delivery
/// crosses asynchronously: `publish` returns before any subscriber ran, and
/// its ``EventDelivery`` counts none.
struct IsolatedEventBus: EventBus {
    let hub: EventHub
    let owner: ServiceOwner
    let notices: ChildNoticeWriter

    @discardableResult
    func publish(_ event: EventPayload) -> EventDelivery {
        guard let json = try? event.json() else {
            return EventDelivery(event: event.name, delivered: 0, failures: ["the event could not be encoded as JSON"], cycle: nil)
        }
        // The host stops reading a child's notices at a larger one.
        guard json.count + event.name.utf8.count + 1_024 < ChildNotice.maximumLength else {
            return EventDelivery(event: event.name, delivered: 0,
                                 failures: ["the event's JSON takes \(json.count) bytes, over the \(ChildNotice.maximumLength) an isolated plugin may publish"], cycle: nil)
        }
        notices.send(.publish(CrossingEvent(name: event.name, chain: EventHub.currentChain, json: json)))
        return EventDelivery(event: event.name, delivered: 0, failures: [], cycle: nil)
    }

    @discardableResult
    func subscribe(to name: String, _ handler: @escaping @Sendable (EventPayload) throws -> Void) -> EventSubscription {
        let subscription = hub.subscribe(owner: owner, event: name, handler: handler)
        notices.announce(name)
        return subscription
    }
}
