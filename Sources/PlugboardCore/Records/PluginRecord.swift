@_spi(PlugboardHost) import Plugboard

/// Everything the host knows about one candidate plugin file: the row of
/// `plugboard list` and the body of `plugboard inspect`.
public struct PluginRecord: Sendable {
    /// Absolute path of the candidate, as found.
    public package(set) var path: String
    /// The real file after following symlinks.
    public package(set) var resolvedPath: String?
    public package(set) var status: PluginStatus
    /// Why it is not active (nil when active).
    public package(set) var error: PluginLoadError?
    /// Problems that did not stop the plugin (e.g. an undeclared interface).
    public package(set) var warnings: [String] = []
    /// Interfaces it provides that this host does not declare (each also a
    /// warning): normal for a tool listing a host's plugins.
    package var undeclared: [String] = []

    /// The warning of a provided interface the host does not declare.
    package static func undeclaredWarning(_ interface: Interface) -> String {
        "provides \(interface), which this host does not declare; ignored"
    }

    // From the descriptor, once read.
    public package(set) var id: String?
    public package(set) var version: SemanticVersion?
    public package(set) var provides: [Interface] = []
    public package(set) var services: [String] = []
    public package(set) var sdkABI: ABIVersion?
    public package(set) var sdkVersion: String?
    public package(set) var toolchain: String?
    /// Activation triggers from the descriptor (`startup`, `route:<prefix>`,
    /// `event:<name>`), besides the first lookup of a provided interface.
    public package(set) var activation: [String] = []
    /// The plugins it builds on, with version ranges (see docs/dependencies.md).
    public package(set) var requires: [PluginDependency] = []
    /// What it needs when run sandboxed (`tcp-connect:443`, `read:/etc/ssl`;
    /// docs/sandbox.md), read without running it.
    public package(set) var needs: [String] = []
    /// 1 for the first load, +1 per hot reload.
    public package(set) var generation: Int?
    /// Where its code runs (or would run), and its child's state and pid
    /// when isolated. Set on the records ``PluginHost/records`` returns.
    public package(set) var isolation: IsolationStatus?

    // From the file, before loading.
    public package(set) var file: FileDetails?
    /// The SHA-256 of the bytes admitted (lowercase hex), when it was
    /// computed: under a lock file, or for `plugboard lock`.
    public package(set) var sha256: String?

    /// Facts read from the file without loading it.
    public struct FileDetails: Sendable, Codable, Equatable {
        public let size: Int
        public let architecture: String
        /// The toolchain line of the file's `.comment`.
        public let toolchain: String?
        /// SDK ABI read from the ABI marker the file references.
        public let sdkABI: ABIVersion?
        public let needed: [String]
        public let runpath: [String]
        public let hasEntryPoint: Bool

        package init(
            size: Int, architecture: String, toolchain: String?, sdkABI: ABIVersion?, needed: [String], runpath: [String],
            hasEntryPoint: Bool
        ) {
            self.size = size
            self.architecture = architecture
            self.toolchain = toolchain
            self.sdkABI = sdkABI
            self.needed = needed
            self.runpath = runpath
            self.hasEntryPoint = hasEntryPoint
        }
    }

    package init(path: String, resolvedPath: String?, status: PluginStatus = .rejected) {
        self.path = path
        self.resolvedPath = resolvedPath
        self.status = status
    }

    package mutating func fail(_ error: PluginLoadError) {
        self.error = error
        self.status = error.status
    }

    /// The human reason, when not active.
    public var reason: String? { error?.reason }
    /// The stable code, when not active.
    public var code: String? { error?.code.rawValue }
    /// Why it is quarantined, when it is.
    public var quarantine: Quarantine? { error?.quarantine }
}
