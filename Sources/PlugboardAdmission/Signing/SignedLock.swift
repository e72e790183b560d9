import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The lock file in force and the signature it was accepted with
/// (``PluginHost/signedLock``): which key signed it, and the terms of its
/// trusted comment.
public struct SignedLock: Sendable, Codable, Equatable {
    /// The signing key's id as minisign prints it (16 hex digits).
    public let keyID: String
    /// Only ever goes up: a host refuses a set numbered below one it accepted (`lock-rollback`).
    public let sequence: UInt64
    /// After it the set is refused (`lock-expired`): running plugins keep running, new files are not admitted.
    public let expires: Date
    /// The release channel the set was signed for.
    public let channel: String
}
