import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// What one plugin is doing now, for operators: ``PluginHost/snapshot()``,
/// `plugboard dev --json` (a `status` event on SIGUSR1), or a host's own
/// admin endpoint (docs/operations.md).
public struct PluginSnapshot: Sendable, Encodable {
    /// Its id, when the file was read that far.
    public let id: String?
    public let file: String
    /// `active`, `available`, `rejected`, `quarantined`, `failed` or `disabled`.
    public let status: String
    public let version: String?
    /// Why it is not active or available (a ``PluginLoadError/Code``).
    public let code: String?
    /// The live generation (1, then one more per reload).
    public let generation: Int?
    /// The fingerprint of the admitted bytes it runs (a fast 64-bit hash: 16
    /// hex digits), and their SHA-256 when the host records it (lock file).
    public let contentHash: String?
    public let sha256: String?
    /// When the live generation started.
    public let activatedAt: Date?
    /// Where it runs, and its child's state.
    public let isolation: IsolationStatus?
    /// Calls to an isolated plugin and how many failed. Nil in process: a
    /// provider is called directly, and counting would put work on every call.
    public let calls: Int?
    public let failures: Int?
    /// An isolated plugin's calls running now, calls that had to wait for
    /// one of its ``PluginIsolation/Limits/callsInFlight`` slots, and calls
    /// that gave up waiting (`plugin-timeout`, the child untouched).
    public let inFlight: Int?
    public let queued: Int?
    public let shed: Int?
    /// Events between an isolated plugin and the host dropped because more
    /// than 1,024 waited one way (it published faster than subscribers
    /// took them, or took the host's slower than they came).
    public let eventsDropped: Int?
    /// Crashes of an isolated plugin's child so far (restarts).
    public let crashes: Int?
    /// Why it is quarantined, when it is.
    public let quarantine: Quarantine?
}
