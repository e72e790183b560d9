import Synchronization

/// Why a host ran code it could not verify: set once, never cleared while
/// the process lives, shown in `list`, diagnostics, `--json`, and stamped on
/// every crash and quarantine record made while it is set, so a bug report
/// tells whether the process ran unverified code.
public struct TaintEntry: Sendable, Codable, Equatable {
    /// `directory-checks-off` (plugin files admitted without the ownership
    /// and permission checks), `unsigned-set` (a file admitted under a lock
    /// file whose signature did not hold, where signatures are only
    /// preferred), `dev-build-loaded` (`plugboard dev` loaded a rebuilt
    /// plugin file during its session) or `sandbox-partial` (a sandboxed
    /// plugin started best effort without every layer) or
    /// `scanner-sandbox-partial` (scanners ran without every layer).
    public let code: String
    public let reason: String
}

/// The host's taint, shared by its parts.
package final class HostTaint: Sendable {
    package static let directoryChecksOff = "directory-checks-off"
    package static let devBuildLoaded = "dev-build-loaded"
    package static let unsignedSet = "unsigned-set"
    package static let sandboxPartial = "sandbox-partial"
    package static let scannerSandboxPartial = "scanner-sandbox-partial"

    private let entries = Mutex<[TaintEntry]>([])
    /// Where the host's diagnostics go (shared with the parts made beside it).
    package let report: @Sendable (HostDiagnostic) -> Void

    package init(report: @escaping @Sendable (HostDiagnostic) -> Void) {
        self.report = report
    }

    /// Records `code` (once; the first reason stays) and reports it the first time.
    package func mark(_ code: String, _ reason: String) {
        let isNew = entries.withLock { entries in
            guard !entries.contains(where: { $0.code == code }) else { return false }
            entries.append(TaintEntry(code: code, reason: reason))
            return true
        }
        if isNew { report(HostDiagnostic(.warning, code: "host-tainted", message: "this host is tainted (\(code)): \(reason)")) }
    }

    package var all: [TaintEntry] { entries.withLock { $0 } }

    /// The codes, for a record made now; nil when untainted.
    package var codes: [String]? {
        let codes = entries.withLock { $0.map(\.code) }
        return codes.isEmpty ? nil : codes
    }
}
