/// A named action a plugin offers: the host lists commands and runs them by name.
///
/// The simplest extension point: `plugboard run` and the demo host call it.
public protocol Command: Sendable {
    /// Name the host runs it by, e.g. `"greet"`. Unique per host by convention.
    var name: String { get }
    /// One line for listings.
    var summary: String { get }
    /// Runs the command and returns its output.
    func run(arguments: [String]) throws -> String
}

/// The extension point for ``Command`` providers: `plugboard.command` 1.0.
public enum Commands: ExtensionPoint {
    /// What each provider is.
    public typealias Provider = any Command
    /// `plugboard.command` at the version this plugin or host is compiled with.
    @_alwaysEmitIntoClient
    public static var interface: Interface { Interface(id: "plugboard.command", version: SemanticVersion(1, 0)) }
}
