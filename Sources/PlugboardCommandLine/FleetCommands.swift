import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// The fleet commands (publish, pull, follow, ...): they live in their own
/// executable, `plugboard-fleet`, so libcurl is never loaded into
/// `plugboard`, which the scanner and isolated children re-execute.
/// `plugboard NAME` runs `plugboard-fleet NAME` from its own folder.
package enum FleetCommands {
    /// Name and one-line abstract of each, for `plugboard --help`.
    package static let summaries: [(name: String, abstract: String)] = [
        ("publish", "Push a signed plugin set to an OCI registry as one artifact."),
        ("pull", "Fetch a signed set from a registry, verify it, and install it in one switch."),
        ("follow", "Poll a registry tag and install each newer signed set it points to."),
        ("rollback", "Switch a plugins directory back to the set it held before the last install."),
        ("export", "Copy a set from a registry into an OCI image layout (for air-gapped sites)."),
        ("import", "Verify and install a set from an OCI image layout."),
    ]

    /// The executable that runs them.
    package static let executableName = "plugboard-fleet"

    /// Replaces this process with `plugboard-fleet` (beside this
    /// executable) running `arguments`; returns only when it cannot.
    package static func exec(_ arguments: [String]) -> Never {
        let own = PluginDirectory.resolvedPath("/proc/self/exe")
        let folder = own.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let path = (folder.isEmpty ? "." : folder) + "/" + executableName
        let argv = [path] + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        execv(path, &cArguments)
        let reason = String(cString: strerror(errno))
        Terminal.error("cannot run \(path) (\(reason)): the fleet commands are in that executable, built beside plugboard "
            + "(`swift build --product plugboard-fleet`, or `make build`)")
        exit(ExitStatus.failure)
    }
}
