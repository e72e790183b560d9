import CPlugboardHost
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardAdmission
import PlugboardLoading

/// What this machine's kernel lets a child confine itself with: a child of
/// `executable` (a program that links PlugboardHost) started as a scanner
/// with the strictest policy, whose hello says which layers it reached
/// (`plugboard doctor`). Nothing is loaded in it.
package enum SandboxProbe {
    package struct Failure: Error {
        package let reason: String
    }

    /// The layers a sandboxed plugin with no grants needs, and what the
    /// probe reached of them; `landlock-network` is reported but needed
    /// only when TCP ports are granted.
    package static func run(executable: String = "/proc/self/exe") throws(Failure) -> SandboxStatus {
        let policy = SandboxPolicy(fileSize: 1 << 20)
        let started: StartedScanner
        do {
            started = try StartedScanner.start(executable, adding: [SandboxPolicy.variable: policy.encoded])
        } catch {
            throw Failure(reason: error.reason)
        }
        defer {
            started.close()
            kill(-started.pid, SIGKILL)
            var status: Int32 = 0
            waitpid(started.pid, &status, 0)
        }
        guard let line = LineChannel(fd: started.channel).readLine(),
              let hello = try? JSONDecoder().decode(ScannerMessage.self, from: Data(line)), hello.kind == .hello
        else {
            throw Failure(reason: "\(executable) did not say hello as a scanner: is it a program that links PlugboardHost?")
        }
        return SandboxStatus(hello.sandbox ?? SandboxReport(), needed: policy.neededLayers)
    }
}
