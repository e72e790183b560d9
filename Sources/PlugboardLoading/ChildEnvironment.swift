import CPlugboardHost
import FoundationEssentials

/// The environment of a child process the host starts, a scanner or an
/// isolated plugin's `plugboard-child`: what they share, with the variable
/// that says which one it is.
package enum ChildEnvironment {
    /// A child's environment (a scanner's, or an isolated plugin's): the
    /// host's variables named in `names`, those in `extra`, and the two the
    /// child needs (`variable` set to `value` starts it as what it is),
    /// which nothing overrides.
    package static func make(
        passing names: [String], adding extra: [String: String], variable: String = PLUGBOARD_SCANNER_VARIABLE,
        value: String = PLUGBOARD_SCANNER_PROTOCOL
    ) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { names.contains($0.key) }
        environment.merge(extra) { _, given in given }
        environment[variable] = value
        // The runtime's crash report would push the plugin's own last words
        // out of the stderr tail; the signal and phase say where it died.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        return environment
    }
}
