/// Something a plugin needs beyond what a sandboxed host gives every
/// plugin (the runtime it needs, its own storage, the host's services).
///
/// Declared in ``PluginExport/descriptor(for:id:version:provides:services:activation:requires:needs:)``,
/// read by the host without running the plugin (`plugboard inspect` shows
/// them). A host that runs the plugin sandboxed grants each need in its
/// configuration or refuses the plugin before any of its code runs; a
/// plugin in process or plainly isolated has them all anyway. A sandboxed
/// child gets what is both declared and granted, never more.
///
/// ```swift
/// PluginExport.descriptor(
///     for: Fetcher.self, id: "com.example.fetcher", version: "1.0.0",
///     provides: [Commands.interface], needs: [.tcpConnect(port: 443), .read("/etc/ssl/certs")])
/// ```
///
/// New in SDK 2.3 (hosts before it do not read needs).
@frozen
public struct SandboxNeed: Sendable, Hashable, CustomStringConvertible {
    /// The need as stored in the descriptor: `tcp-connect:<port>`,
    /// `tcp-bind:<port>`, `network`, `read:<absolute path>`.
    public let encoded: String

    @_alwaysEmitIntoClient
    init(encoded: String) { self.encoded = encoded }

    /// Connecting to TCP `port` (1-65535), at any address: the kernel's
    /// layer cannot tell hosts apart.
    @_alwaysEmitIntoClient
    public static func tcpConnect(port: Int) -> SandboxNeed { SandboxNeed(encoded: "tcp-connect:\(port)") }

    /// Listening on TCP `port` (1-65535).
    @_alwaysEmitIntoClient
    public static func tcpBind(port: Int) -> SandboxNeed { SandboxNeed(encoded: "tcp-bind:\(port)") }

    /// UDP and every TCP port.
    @_alwaysEmitIntoClient
    public static var network: SandboxNeed { SandboxNeed(encoded: "network") }

    /// Reading the file or folder at the absolute `path` (and what is in it).
    @_alwaysEmitIntoClient
    public static func read(_ path: String) -> SandboxNeed { SandboxNeed(encoded: "read:\(path)") }

    public var description: String { encoded }
}
