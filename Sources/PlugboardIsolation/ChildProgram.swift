#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// Where the isolated plugins' program, `plugboard-child`, is: the path a
/// host configured, else beside the host's own executable, where SwiftPM
/// builds it for every program that depends on PlugboardHost.
package enum ChildProgram {
    package static let name = "plugboard-child"

    /// The program's path, or why there is none to start (with the fix).
    package static func locate(configured: String?) -> Result<String, Missing> {
        let path: String
        if let configured {
            path = PluginDirectory.absolutePath(configured)
        } else {
            // The executable's real folder: a link to the host's program
            // (an install's bin/) still finds the build it came from.
            guard let executable = realpath("/proc/self/exe", nil) else {
                return .failure(Missing(path: name, reason: "this process's executable cannot be read from /proc/self/exe"))
            }
            defer { free(executable) }
            path = OwnershipCheck.parent(of: String(cString: executable)) + "/" + name
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(path, X_OK) == 0 else {
            return .failure(Missing(path: path, reason: configured == nil
                ? "there is no \(name) beside the host's executable (\(path)): build the package with SwiftPM, which builds it beside every program that depends on PlugboardHost, and ship it beside the program, or set PluginHost.Configuration.isolation.childProgram"
                : "\(path) (isolation.childProgram) is not an executable file: point it at the \(name) built with this host"))
        }
        return .success(path)
    }

    package struct Missing: Error, Sendable {
        package let path: String
        package let reason: String
    }
}
