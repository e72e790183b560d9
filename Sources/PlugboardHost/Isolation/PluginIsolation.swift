/// Where a plugin's code runs: in the host's process (the default, fastest)
/// or in a child process of its own, where a crash, exit or hang costs a
/// call instead of the host. The plugin's file is the same either way.
public struct PluginIsolation: Sendable, Equatable {
    /// Limits of an isolated plugin's child process.
    public struct Limits: Sendable, Equatable {
        /// CPU seconds the child may use over its life (nil: none).
        public var cpuSeconds: Int?
        /// The child's address space, bytes (not applied under sanitizers,
        /// which reserve huge ranges).
        public var addressSpace: Int?
        /// Open file descriptors the child may hold.
        public var descriptors: Int?

        public init(cpuSeconds: Int? = nil, addressSpace: Int? = 4 << 30, descriptors: Int? = 256) {
            self.cpuSeconds = cpuSeconds
            self.addressSpace = addressSpace
            self.descriptors = descriptors
        }
    }

    /// Whether the plugin runs in a child process.
    public var isolated: Bool
    /// The child's limits (ignored in process).
    public var limits: Limits

    /// In the host's process.
    public static let inProcess = PluginIsolation(isolated: false)
    /// In a child process with the default limits.
    public static let isolated = PluginIsolation(isolated: true)

    public init(isolated: Bool, limits: Limits = Limits()) {
        self.isolated = isolated
        self.limits = limits
    }
}
