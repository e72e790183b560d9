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
    package static let version = 5
    /// The largest frame either side accepts (a bigger one is a protocol
    /// violation: the child is killed). Above the 1 MiB calls the bench makes.
    package static let maximumFrame = 64 << 20

    package enum Kind: UInt8 {
        // Host to child.
        case start = 1, call = 2, saveState = 3, event = 4
        /// Cancel the task serving the call with this sequence (its reply may still come).
        case cancel = 5
        /// Liveness, after a call ran past its deadline: the child's reader
        /// answers ``pong`` at once, saying whether that call (its sequence,
        /// the payload) still runs.
        case ping = 6
        // Child to host.
        case started = 10, startFailed = 11, reply = 12, threw = 13, unknownMethod = 14, state = 15
        // Host to child, on the relay answers' pipe (``HostRelay``).
        case relayAnswer = 16
        /// Child to host: the reply is over ``maximumFrame``; not sent.
        case replyTooLarge = 17
        /// Either way: the frame is in the sender's ``SharedRing``; the
        /// sequence is its position there, the payload its length.
        case shared = 18
        /// Child to host: the answer to a ``ping`` (payload: 1 when the call asked about still runs).
        case pong = 19
    }

    /// The provider index of a call for one of the plugin's routes.
    static let routeIndex = UInt32.max

    /// What the child must load and how, checked before any plugin code runs.
    package struct StartRequest: Codable, Sendable {
        package var protocolVersion: Int
        package var sdkABI: [UInt32]
        /// The private copy of the admitted bytes, and the path to name in messages.
        package var file: String
        package var path: String
        package var pluginID: String
        /// ``ContentHash`` of the admitted bytes, as text.
        package var contentHash: String
        package var points: [Point]
        package var deniedServices: [String]
        package var overrides: [String: WireValue]
        package var settingsFile: String?
        package var dataDirectory: String?
        package var quota: [Int]
        package var limits: Limits
        /// State handed over by the previous generation (a hot reload).
        package var state: [UInt8]?
        /// The plugins active in the host when it starts (`PluginContext.hasPlugin`).
        package var activePlugins: [String]
        /// What the child's sandbox must reach (nil: not sandboxed).
        package var sandbox: Sandbox?
        /// The host mapped both rings: the child may send large frames in its own.
        var rings: Bool?
        /// Shared libraries defining the points' types (a host's interface
        /// packages), loaded before the plugin: `plugboard-child` links only the SDK.
        package var libraries: [String]?

        package init(protocolVersion: Int, sdkABI: [UInt32], file: String, path: String, pluginID: String, contentHash: String, points: [Point], deniedServices: [String], overrides: [String: WireValue], settingsFile: String? = nil, dataDirectory: String? = nil, quota: [Int], limits: Limits, state: [UInt8]? = nil, activePlugins: [String], sandbox: Sandbox? = nil, rings: Bool? = nil) {
            self.protocolVersion = protocolVersion
            self.sdkABI = sdkABI
            self.file = file
            self.path = path
            self.pluginID = pluginID
            self.contentHash = contentHash
            self.points = points
            self.deniedServices = deniedServices
            self.overrides = overrides
            self.settingsFile = settingsFile
            self.dataDirectory = dataDirectory
            self.quota = quota
            self.limits = limits
            self.state = state
            self.activePlugins = activePlugins
            self.sandbox = sandbox
            self.rings = rings
        }

        package struct Sandbox: Codable, Sendable {
            /// The layers the guarantees need.
            package var needed: [String]
            /// Refuse to start when one is missing (else start and report).
            package var required: Bool

            package init(needed: [String], required: Bool) {
                self.needed = needed
                self.required = required
            }
        }

        package struct Point: Codable, Sendable {
            package var interfaceID: String
            package var major: Int
            package var minor: Int
            /// The point type's mangled name, found again in the child (the same program).
            package var typeName: String

            package init(interfaceID: String, major: Int, minor: Int, typeName: String) {
                self.interfaceID = interfaceID
                self.major = major
                self.minor = minor
                self.typeName = typeName
            }
        }

        package struct Limits: Codable, Sendable {
            package var cpuSeconds: Int?
            package var addressSpace: Int?
            package var descriptors: Int?
            /// Calls the host may have in flight at once: the child's call threads.
            package var callsInFlight: Int
            /// Its RLIMIT_NPROC (``ChildBounds/processLimit()``; nil: none).
            package var processes: Int?
            /// Its cgroup bounds are required: a child that could not join
            /// its leaf refuses to start (nil: best effort).
            package var boundsRequired: Bool?

            package init(cpuSeconds: Int? = nil, addressSpace: Int? = nil, descriptors: Int? = nil, callsInFlight: Int) {
                self.cpuSeconds = cpuSeconds
                self.addressSpace = addressSpace
                self.descriptors = descriptors
                self.callsInFlight = callsInFlight
            }
        }
    }

    /// The plugin started: its providers, in order, with their profiles.
    struct StartReply: Codable {
        package var providers: [Provider]
        /// Events the plugin subscribed to while it started.
        package var subscriptions: [String]
        /// Whether the old generation's state was restored, and how (for a reload).
        package var stateNote: String?
        /// What the child's sandbox reached (nil: none was asked for).
        package var sandbox: SandboxReport?
        /// The child mapped both rings: the host may send large frames in its own.
        var rings: Bool?
        /// The cgroup leaves it could not join, with why (nil: it joined all, or none was asked).
        var unjoined: String?

        package init(providers: [Provider], subscriptions: [String], stateNote: String? = nil, sandbox: SandboxReport? = nil, rings: Bool? = nil) {
            self.providers = providers
            self.subscriptions = subscriptions
            self.stateNote = stateNote
            self.sandbox = sandbox
            self.rings = rings
        }

        package struct Provider: Codable {
            package var interfaceID: String
            package var profile: [UInt8]

            package init(interfaceID: String, profile: [UInt8]) {
                self.interfaceID = interfaceID
                self.profile = profile
            }
        }
    }

    struct StartFailure: Codable {
        package var code: String
        package var reason: String

        package init(code: String, reason: String) {
            self.code = code
            self.reason = reason
        }
    }

    struct Diagnostic: Codable {
        package var error: Bool
        package var code: String
        package var message: String
        package var keyPath: String?

        package init(error: Bool, code: String, message: String, keyPath: String? = nil) {
            self.error = error
            self.code = code
            self.message = message
            self.keyPath = keyPath
        }
    }

    /// A configuration value as it crosses (``ConfigValue`` is not `Codable`).
    package indirect enum WireValue: Codable, Sendable {
        case bool(Bool), int(Int), double(Double), string(String), array([WireValue]), object([String: WireValue])

        package init(_ value: ConfigValue) {
            switch value {
            case let .bool(flag): self = .bool(flag)
            case let .int(number): self = .int(number)
            case let .double(number): self = .double(number)
            case let .string(text): self = .string(text)
            case let .array(items): self = .array(items.map(WireValue.init))
            case let .object(fields): self = .object(fields.mapValues(WireValue.init))
            }
        }

        package var value: ConfigValue {
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
