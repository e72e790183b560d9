import CPlugboardHost
import Dispatch
import FoundationEssentials
import Synchronization
import PlugboardCore
#if canImport(Glibc)
import Glibc
#endif

/// A scanner process just started: its pid, channel and stderr. (Package
/// access: the benchmark times a scanner's start with it.)
package struct StartedScanner: Sendable {
    package let pid: pid_t
    package let channel: Int32
    package let errors: Int32

    package struct Failure: Error {
        package let reason: String
    }

    /// Starts `executable` as a scanner (its C constructor takes over before
    /// main), with only the host's environment variables named in `names`
    /// (a plugin's constructors must not read the host's secrets), plus the
    /// variables in `extra` with their values (``ScannerSettings/extraEnvironment``;
    /// they win over a passed-through variable of the same name, and the
    /// scanner's own two below win over them).
    ///
    /// `rehearsing`: a spare, which scans a built-in plugin before it says
    /// hello (``ScannerRehearsal``).
    package static func start(
        _ executable: String, passing names: [String] = ScannerSettings.defaultEnvironment, adding extra: [String: String] = [:],
        rehearsing: Bool = false
    ) throws(Failure) -> StartedScanner {
        var arguments: [UnsafeMutablePointer<CChar>?] = [strdup(executable), nil]
        var environment = ChildEnvironment.make(passing: names, adding: extra)
        environment[ScannerRehearsal.variable] = rehearsing ? "1" : nil
        var entries: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            arguments.forEach { free($0) }
            entries.forEach { free($0) }
        }
        var channel: Int32 = -1, errors: Int32 = -1
        var pid: pid_t = 0
        let result = plugboard_spawn_scanner(executable, &arguments, &entries, &channel, &errors, &pid)
        guard result == 0 else { throw Failure(reason: "cannot start \(executable): \(String(cString: strerror(result)))") }
        // In a cgroup of its own before it is sent a file: a constructor
        // is plugin code (docs/sandbox.md, "Resources"). Best effort: a
        // scan still runs where this machine gives no cgroup.
        _ = ChildBounds(PluginIsolation.Limits()).leaf()?.place(pid)
        _ = fcntl(errors, F_SETFL, fcntl(errors, F_GETFL) | O_NONBLOCK)
        return StartedScanner(pid: pid, channel: channel, errors: errors)
    }

    package func close() {
        Glibc.close(channel)
        Glibc.close(errors)
    }
}
