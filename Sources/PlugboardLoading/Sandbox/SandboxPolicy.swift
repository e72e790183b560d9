import CPlugboardHost
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardServices

/// What one child process may do, as the host hands it to the child's
/// pre-main constructor (`sandbox.c`): one `key=value` per line in
/// `PLUGBOARD_SANDBOX`, read and removed before any plugin code runs.
package struct SandboxPolicy: Sendable, Equatable {
    var reads: [String] = []
    package var writes: [String] = []
    var tcpConnect: [Int] = []
    var tcpBind: [Int] = []
    var network = false
    var off: Set<PluginSandbox.Layer> = []
    var fileSize: Int?
    var cpuSeconds: Int?
    var addressSpace: Int?
    /// The child's RLIMIT_NPROC (``ChildBounds/processLimit()``).
    var processes: Int?
    var descriptors: Int?

    package init(
        reads: [String] = [], writes: [String] = [], tcpConnect: [Int] = [], tcpBind: [Int] = [], network: Bool = false, off: Set<PluginSandbox.Layer> = [],
        fileSize: Int? = nil, cpuSeconds: Int? = nil, addressSpace: Int? = nil, descriptors: Int? = nil, networkNamespace: Bool = true
    ) {
        self.reads = reads
        self.writes = writes
        self.tcpConnect = tcpConnect
        self.tcpBind = tcpBind
        self.network = network
        self.off = off
        self.fileSize = fileSize
        self.cpuSeconds = cpuSeconds
        self.addressSpace = addressSpace
        self.descriptors = descriptors
        self.networkNamespace = networkNamespace
    }

    /// A network namespace where no network is granted (a scanner does
    /// without: seccomp refuses its sockets anyway, and the namespace's
    /// setup and teardown cost most of the sandbox's share of a scan).
    var networkNamespace = true

    package static let variable = PLUGBOARD_SANDBOX_VARIABLE

    /// The variable's value. A path holding a line break cannot be written
    /// and is left out (it is then not granted).
    package var encoded: String {
        var lines: [String] = []
        lines += reads.filter { !$0.contains("\n") }.map { "read=\($0)" }
        lines += writes.filter { !$0.contains("\n") }.map { "write=\($0)" }
        lines += tcpConnect.sorted().map { "tcp-connect=\($0)" }
        lines += tcpBind.sorted().map { "tcp-bind=\($0)" }
        if network { lines.append("network=all") }
        if !networkNamespace { lines.append("off=network-namespace") }
        lines += off.map(\.description).sorted().map { "off=\($0)" }
        for (key, value) in [("file-size", fileSize), ("cpu-seconds", cpuSeconds), ("address-space", addressSpace), ("descriptors", descriptors),
                             ("processes", processes)] {
            if let value { lines.append("\(key)=\(value)") }
        }
        return lines.joined(separator: "\n")
    }

    /// The layers whose absence breaks a guarantee of this policy.
    package var neededLayers: [String] {
        var layers = ["no-new-privileges", "landlock", "seccomp"]
        layers.append("limits")
        if !network && !(tcpConnect.isEmpty && tcpBind.isEmpty) { layers.append("landlock-network") }
        if geteuid() == 0 { layers.append("capabilities") }
        return layers
    }

    /// A scanner's: the private copies it loads (and the interface
    /// libraries beside them), the settings file a verification reads, and
    /// the verification's scratch folder, size-limited per file.
    /// No network namespace: see ``networkNamespace``.
    package static func scanner(copies: String, settingsFile: String?, off: Set<PluginSandbox.Layer>) -> SandboxPolicy {
        var policy = SandboxPolicy(
            reads: [copies] + (settingsFile.map { [$0] } ?? []), writes: [copies + "/verification-data"], off: off,
            fileSize: 16 << 20, addressSpace: Int(ScannerChild.addressSpaceLimit))
        policy.networkNamespace = false
        return policy
    }
}

extension SandboxPolicy {
    /// An isolated plugin's child: the folder of the private copy it loads
    /// (the interface libraries are copied beside it; the host sends it its
    /// own settings, so not the settings file),
    /// its own storage folder, read-only (made here; the host makes its
    /// writes, ``HostRelay``), what `confinement` grants, and its limits.
    package static func child(
        _ confinement: PluginSandbox, copy: String, libraries: [String] = [], storage: FileKeyValueStore?,
        limits: PluginIsolation.Limits
    ) -> SandboxPolicy {
        let copies = String(copy[..<(copy.lastIndex(of: "/") ?? copy.endIndex)])
        var folders: [String] = []
        if let storage, makeDirectories(storage.directory) == nil { folders.append(storage.directory) }
        // The points' interface libraries the child loads before the plugin (read only).
        var policy = SandboxPolicy(
            reads: [copies] + libraries + folders, off: confinement.layersOff, fileSize: 1 << 20, cpuSeconds: limits.cpuSeconds,
            addressSpace: limits.addressSpace, descriptors: limits.descriptors)
        policy.processes = ChildBounds.processLimit()
        policy.grant(confinement.grants)
        return policy
    }

    /// Adds what `grants` gives: the paths to read, the TCP ports, the network.
    package mutating func grant(_ grants: PluginSandbox.Grants) {
        reads += grants.readPaths
        tcpConnect = grants.tcpConnect.sorted()
        tcpBind = grants.tcpBind.sorted()
        network = grants.network
    }
}
