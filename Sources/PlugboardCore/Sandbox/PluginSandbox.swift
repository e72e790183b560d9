/// How a sandboxed plugin's child is confined: what it is granted beyond
/// the runtime it needs and its own storage, and what happens when this
/// machine cannot confine it fully (docs/sandbox.md).
///
/// A sandboxed plugin always runs isolated. Without grants its child can
/// read the runtime it needs (the program's libraries, the toolchain's
/// runtime, the host's private copies of plugin files), read and write its
/// own storage folder, and use the host's services over its channel;
/// nothing else: no other files, no network, no programs, no signals or
/// tracing of other processes, no new processes or namespaces, no raised
/// limits.
public struct PluginSandbox: Sendable, Equatable {
    /// What the host does when a layer the guarantees need is missing.
    public struct Enforcement: Sendable, Hashable, CustomStringConvertible {
        public let description: String
        /// Refuse to start the plugin (`sandbox-unavailable`, naming the layer).
        public static let required = Enforcement(description: "required")
        /// Start it with what was reached, report the gap and taint the host.
        public static let bestEffort = Enforcement(description: "best-effort")
    }

    /// What the host grants beyond the defaults. (Plugins cannot declare
    /// their needs yet: a child gets what is granted here; docs/sandbox.md,
    /// "Limits".)
    public struct Grants: Sendable, Equatable {
        /// TCP ports it may connect to (anywhere: the kernel layer cannot
        /// tell hosts apart).
        public var tcpConnect: Set<Int>
        /// TCP ports it may listen on.
        public var tcpBind: Set<Int>
        /// UDP and every TCP port.
        public var network: Bool
        /// Files and folders it may read (and list).
        public var readPaths: [String]

        public init(tcpConnect: Set<Int> = [], tcpBind: Set<Int> = [], network: Bool = false, readPaths: [String] = []) {
            self.tcpConnect = tcpConnect
            self.tcpBind = tcpBind
            self.network = network
            self.readPaths = readPaths
        }
    }

    /// A layer of the sandbox, as reports name it.
    public struct Layer: Sendable, Hashable, CustomStringConvertible {
        public let description: String
        /// Files, programs; TCP ports and signal scopes where the kernel's
        /// Landlock ABI has them.
        public static let landlock = Layer(description: "landlock")
        /// The system calls Landlock does not see: sockets, processes,
        /// namespaces, tracing, limits.
        public static let seccomp = Layer(description: "seccomp")
        /// Resource limits (no core files, file size, CPU, memory, descriptors).
        public static let limits = Layer(description: "limits")
        /// User, IPC and (without a network grant) network namespaces: not
        /// needed for the guarantees, applied where the kernel allows.
        public static let namespaces = Layer(description: "namespaces")
    }

    public var enforcement: Enforcement
    public var grants: Grants
    /// Layers not applied, as if this kernel lacked them: to try a host's
    /// behaviour on a machine without them (the report says they are off).
    public var layersOff: Set<Layer>

    public init(enforcement: Enforcement = .required, grants: Grants = Grants(), layersOff: Set<Layer> = []) {
        self.enforcement = enforcement
        self.grants = grants
        self.layersOff = layersOff
    }
}
