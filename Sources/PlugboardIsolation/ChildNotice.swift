@_spi(PlugboardHost) import Plugboard
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
    /// A request for the host to make, and answer (``HostRelay``): a
    /// sandboxed child's storage write, a route registration.
    case relay(HostRelay.Request)
    /// Events from the host the child dropped (its queue was full), since it last told.
    case eventsDropped(Int)

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
        case let .relay(request):
            body = [6] + ((try? CompactEncoder().encode(request)) ?? [])
        case let .eventsDropped(count):
            body = [7]
            withUnsafeBytes(of: UInt32(clamping: count).littleEndian) { body += $0 }
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
            let length = Int(buffer.littleEndian(at: start, count: 4))
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
            case 6:
                guard let request = try? CompactDecoder().decode(HostRelay.Request.self, from: payload) else { return false }
                body(.relay(request))
            case 7 where payload.count == 4:
                body(.eventsDropped(Int(payload.littleEndian(at: payload.startIndex, count: 4))))
            default: return false
            }
        }
        return true
    }
}
