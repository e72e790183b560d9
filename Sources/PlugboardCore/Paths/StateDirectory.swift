import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Where a host keeps its registry cache and crash journal, and whether it
/// may: both steer what loads and what is quarantined, so the folder must be
/// as trusted as a plugins directory (ours or root's, nobody else can write
/// it or a folder above it). An untrusted one is not used, with one warning.
package struct StateDirectory: Sendable {
    package let path: String
    package let isTrusted: Bool

    /// `configured`: ``PluginHost/Configuration/Paths/cache``; `checksOwnership`:
    /// whether ``PluginHost/Configuration/Trust/directories`` are enforced.
    package init(configured: String?, checksOwnership: Bool, report: (HostDiagnostic) -> Void) {
        guard checksOwnership else {
            path = PluginDirectory.absolutePath(configured ?? Self.defaultPath())
            isTrusted = true
            return
        }
        if let configured {
            path = PluginDirectory.absolutePath(configured)
            let reason = Self.untrustedReason(path)
            isTrusted = reason == nil
            if let reason { report(Self.notUsed(path, reason)) }
            return
        }
        (path, isTrusted) = Self.defaultDirectory(report: report)
    }

    /// The default: `$XDG_CACHE_HOME/plugboard`, else `$HOME/.cache/plugboard`,
    /// else the user's home from the user database, else
    /// `<temp>/plugboard-cache-<euid>`. If that one is not trusted (another
    /// user made it first), a new private folder made for this process
    /// instead: the cache and the journal then last as long as the process.
    static func defaultDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment, home: String? = userHome(),
        temporary: String = FileManager.default.temporaryDirectory.path, report: (HostDiagnostic) -> Void
    ) -> (path: String, isTrusted: Bool) {
        let path = defaultPath(environment: environment, home: home, temporary: temporary)
        guard let reason = untrustedReason(path) else { return (path, true) }
        guard path.hasPrefix(temporary + "/"), let own = makePrivateFolder(in: temporary) else {
            report(notUsed(path, reason))
            return (path, false)
        }
        report(HostDiagnostic(.warning, code: "cache-directory-untrusted",
            message: "\(path): not used for the registry cache or the crash journal: \(reason); using \(own), made for this "
                + "process only (the next start scans again and remembers no crash). Set HOME or XDG_CACHE_HOME, or a cache "
                + "directory (PluginHost.Configuration.paths.cache, `--cache DIR`)",
            file: path))
        return (own, true)
    }

    static func defaultPath(
        environment: [String: String] = ProcessInfo.processInfo.environment, home: String? = userHome(),
        temporary: String = FileManager.default.temporaryDirectory.path
    ) -> String {
        if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") { return "\(base)/plugboard" }
        if let home = environment["HOME"] ?? home, home.hasPrefix("/") { return "\(home)/.cache/plugboard" }
        return "\(temporary)/plugboard-cache-\(geteuid())"
    }

    /// This user's home folder from the user database (getpwuid_r).
    static func userHome() -> String? {
        var record = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(geteuid(), &record, &buffer, buffer.count, &found) == 0, found != nil, let directory = record.pw_dir
        else { return nil }
        let home = String(cString: directory)
        return home.isEmpty || home == "/nonexistent" ? nil : home
    }

    /// A new folder only this user can enter (mkdtemp), or nil.
    private static func makePrivateFolder(in temporary: String) -> String? {
        var template = Array("\(temporary)/plugboard-cache-\(geteuid())-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { return nil }
        let path = String(cString: made)
        return untrustedReason(path) == nil ? path : nil
    }

    private static func notUsed(_ path: String, _ reason: String) -> HostDiagnostic {
        HostDiagnostic(.warning, code: "cache-directory-untrusted",
            message: "\(path): not used for the registry cache or the crash journal: \(reason); "
                + "every start scans every plugin file and a crash is not remembered. Fix it as the reason says, "
                + "or set another cache directory (PluginHost.Configuration.paths.cache, `--cache DIR`)",
            file: path)
    }

    /// Why `directory` (and its `journal/`) must not be used: it cannot be
    /// made, or someone else owns or can write it or a folder above it. nil
    /// when it may.
    static func untrustedReason(_ directory: String) -> String? {
        OwnershipCheck.problem(makingFolder: directory) ?? OwnershipCheck.problem(makingFolder: directory + "/journal")
    }
}
