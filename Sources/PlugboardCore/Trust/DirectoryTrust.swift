/// Which plugin files a host trusts as code, judged by who can change them
/// (as sshd's `StrictModes` judges key files).
///
/// Enforced (the default), a plugin file is examined only when the file and
/// every folder above it, up to `/`, belong to root or to the user running
/// the host and cannot be written by other users: group-writable is allowed
/// only for the owner's private group, and a world-writable folder only above
/// the trusted directory and only with the sticky bit (`/tmp`). A symlink must
/// lead into a trusted directory: the folder the plugin was found in, or one
/// of ``trustedDirectories``. Anything else is rejected before it is read,
/// with the code `unsafe-owner`, `unsafe-permissions` or `untrusted-symlink`.
public struct DirectoryTrust: Sendable, Equatable {
    /// Whether the checks run. Off, every discovery reports the warning
    /// `directory-checks-off`: any user who can write to the plugins directory
    /// or a folder above it can then run code in the host.
    public var enforced: Bool
    /// Folders besides the plugins directory that symlinked plugins may lead
    /// into (a build folder linked into the plugins directory). They are
    /// checked like the plugins directory.
    public var trustedDirectories: [String]

    /// Checks on or off, and the folders besides the plugins directory that
    /// symlinked plugins may lead into.
    public init(enforced: Bool = true, trustedDirectories: [String] = []) {
        self.enforced = enforced
        self.trustedDirectories = trustedDirectories
    }

    /// The checks on: the default.
    public static let enforced = DirectoryTrust()
    /// The checks off, for a development machine or a container that builds as
    /// root in a checkout another user owns. Reported loudly at every discovery.
    public static let unenforced = DirectoryTrust(enforced: false)

    /// The environment variable that turns the checks off in the `plugboard`
    /// tool (as `--allow-unsafe-directories` does), for containers where the
    /// command line is fixed.
    public static let environmentOptOut = "PLUGBOARD_ALLOW_UNSAFE_DIRECTORIES"
}
