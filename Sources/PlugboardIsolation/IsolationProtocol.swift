@_spi(PlugboardHost) import Plugboard
import PlugboardCore

/// The messages between the host and an isolated plugin's child, on a pipe
/// pair. Each is a frame: a 4-byte little-endian length (of what follows),
/// a kind byte, an 8-byte sequence number and the payload. Structured
/// payloads are ``CompactEncoder`` bytes; a call's are its provider index,
/// method and argument bytes, so the child decodes no header it need not.
/// A route's call has provider index ``routeIndex`` and the route's
/// pattern for its method, its bytes ``RouteWire``'s.
package enum IsolationProtocol {
    /// Raised when either side's messages change shape.
    static let version = 5
    /// The largest frame either side accepts (a bigger one is a protocol
    /// violation: the child is killed). Above the 1 MiB calls the bench makes.
    package static let maximumFrame = 64 << 20

    package enum Kind: UInt8 {
        // Host to child.
        case start = 1, call = 2, saveState = 3, event = 4
        /// Cancel the task serving the call with this sequence (its reply may still come).
        case cancel = 5
        // Child to host.
        case started = 10, startFailed = 11, reply = 12, threw = 13, unknownMethod = 14, state = 15
        // Host to child, on the relay answers' pipe (``HostRelay``).
        case relayAnswer = 16
        /// Child to host: the reply is over ``maximumFrame``; not sent.
        case replyTooLarge = 17
        /// Either way: the frame is in the sender's ``SharedRing``; the
        /// sequence is its position there, the payload its length.
        case shared = 18
    }

    /// The provider index of a call for one of the plugin's routes.
    static let routeIndex = UInt32.max

    /// What the child must load and how, checked before any plugin code runs.
    struct StartRequest: Codable, Sendable {
        var protocolVersion: Int
        var sdkABI: [UInt32]
        /// The private copy of the admitted bytes, and the path to name in messages.
        var file: String
        var path: String
        var pluginID: String
        /// ``ContentHash`` of the admitted bytes, as text.
        var contentHash: String
        var points: [Point]
        var deniedServices: [String]
        var overrides: [String: WireValue]
        var settingsFile: String?
        var dataDirectory: String?
        var quota: [Int]
        var limits: Limits
        /// State handed over by the previous generation (a hot reload).
        var state: [UInt8]?
        /// The plugins active in the host when it starts (`PluginContext.hasPlugin`).
        var activePlugins: [String]
        /// What the child's sandbox must reach (nil: not sandboxed).
        var sandbox: Sandbox?
        /// The host mapped both rings: the child may send large frames in its own.
        var rings: Bool?

        struct Sandbox: Codable, Sendable {
            /// The layers the guarantees need.
            var needed: [String]
            /// Refuse to start when one is missing (else start and report).
            var required: Bool
        }

        struct Point: Codable, Sendable {
            var interfaceID: String
            var major: Int
            var minor: Int
            /// The point type's mangled name, found again in the child (the same program).
            var typeName: String
        }

        struct Limits: Codable, Sendable {
            var cpuSeconds: Int?
            var addressSpace: Int?
            var descriptors: Int?
            /// Calls the host may have in flight at once: the child's call threads.
            var callsInFlight: Int
        }
    }

    /// The plugin started: its providers, in order, with their profiles.
    struct StartReply: Codable {
        var providers: [Provider]
        /// Events the plugin subscribed to while it started.
        var subscriptions: [String]
        /// Whether the old generation's state was restored, and how (for a reload).
        var stateNote: String?
        /// What the child's sandbox reached (nil: none was asked for).
        var sandbox: SandboxReport?
        /// The child mapped both rings: the host may send large frames in its own.
        var rings: Bool?

        struct Provider: Codable {
            var interfaceID: String
            var profile: [UInt8]
        }
    }

    struct StartFailure: Codable {
        var code: String
        var reason: String
    }

    struct Diagnostic: Codable {
        var error: Bool
        var code: String
        var message: String
        var keyPath: String?
    }

    /// A configuration value as it crosses (``ConfigValue`` is not `Codable`).
    indirect enum WireValue: Codable, Sendable {
        case bool(Bool), int(Int), double(Double), string(String), array([WireValue]), object([String: WireValue])

        init(_ value: ConfigValue) {
            switch value {
            case let .bool(flag): self = .bool(flag)
            case let .int(number): self = .int(number)
            case let .double(number): self = .double(number)
            case let .string(text): self = .string(text)
            case let .array(items): self = .array(items.map(WireValue.init))
            case let .object(fields): self = .object(fields.mapValues(WireValue.init))
            }
        }

        var value: ConfigValue {
            switch self {
            case let .bool(flag): .bool(flag)
            case let .int(number): .int(number)
            case let .double(number): .double(number)
            case let .string(text): .string(text)
            case let .array(items): .array(items.map(\.value))
            case let .object(fields): .object(fields.mapValues(\.value))
            }
        }
    }
}
