#if canImport(Glibc)
import Glibc
#endif

/// Where a host keeps its registry cache and crash journal, and whether it
/// may: both steer what loads and what is quarantined, so the folder must be
/// as trusted as a plugins directory (ours or root's, nobody else can write
/// it or a folder above it). An untrusted one is not used, with one warning.
struct StateDirectory: Sendable {
    let path: String
    let isTrusted: Bool

    init(configuration: PluginHost.Configuration, report: (HostDiagnostic) -> Void) {
        path = PluginDirectory.absolutePath(configuration.cacheDirectory ?? RegistryCache.defaultDirectory())
        let reason = configuration.trust.enforced ? Self.untrustedReason(path) ?? Self.untrustedReason(path + "/journal") : nil
        isTrusted = reason == nil
        if let reason {
            report(HostDiagnostic(.warning, code: "cache-directory-untrusted",
                message: "\(path): not used for the registry cache or the crash journal: \(reason); "
                    + "every start scans every plugin file and a crash is not remembered. Fix it as the reason says, "
                    + "or set another cache directory (PluginHost.Configuration.cacheDirectory, `--cache DIR`)",
                file: path))
        }
    }

    /// Why `directory` must not be used: it cannot be made, or someone else
    /// owns or can write it or a folder above it. nil when it may.
    static func untrustedReason(_ directory: String) -> String? {
        if let failed = makeDirectories(directory) {
            return "cannot create \(failed.path): \(String(cString: strerror(failed.errno)))"
        }
        var ownership = OwnershipCheck()
        return ownership.problem(folder: directory)
    }
}
