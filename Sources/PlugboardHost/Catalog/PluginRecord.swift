import Plugboard

/// Everything the host knows about one candidate plugin file: the row of
/// `plugboard list` and the body of `plugboard inspect`.
public struct PluginRecord: Sendable {
    /// Absolute path of the candidate, as found.
    public var path: String
    /// The real file after following symlinks.
    public var resolvedPath: String?
    public var status: PluginStatus
    /// Why it is not active (nil when active).
    public var error: PluginLoadError?
    /// Problems that did not stop the plugin (e.g. an undeclared interface).
    public var warnings: [String] = []

    // From the descriptor, once read.
    public var id: String?
    public var version: SemanticVersion?
    public var provides: [Interface] = []
    public var services: [String] = []
    public var sdkABI: ABIVersion?
    public var sdkVersion: String?
    public var toolchain: String?
    /// Activation triggers from the descriptor (`startup`, `route:<prefix>`,
    /// `event:<name>`), besides the first lookup of a provided interface.
    public var activation: [String] = []
    /// 1 for the first load, +1 per hot reload.
    public var generation: Int?

    // From the file, before loading.
    public var file: FileDetails?
    /// The SHA-256 of the bytes admitted (lowercase hex), when it was
    /// computed: under a lock file, or for `plugboard lock`.
    public var sha256: String?

    /// Facts read from the file without loading it.
    public struct FileDetails: Sendable, Codable, Equatable {
        public var size: Int
        public var architecture: String
        /// The toolchain line of the file's `.comment`.
        public var toolchain: String?
        /// SDK ABI read from the ABI marker the file references.
        public var sdkABI: ABIVersion?
        public var needed: [String]
        public var runpath: [String]
        public var hasEntryPoint: Bool
    }

    init(path: String, resolvedPath: String?, status: PluginStatus = .rejected) {
        self.path = path
        self.resolvedPath = resolvedPath
        self.status = status
    }

    mutating func fail(_ error: PluginLoadError) {
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
