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

extension Commands: IsolatableExtensionPoint {
    /// A command's name and summary, answered by the host-side proxy without a call.
    public struct Profile: Codable, Sendable {
        /// ``Command/name``.
        public var name: String
        /// ``Command/summary``.
        public var summary: String
    }

    /// The command's name and summary.
    public static func profile(of provider: any Command) -> Profile {
        Profile(name: provider.name, summary: provider.summary)
    }

    /// A command whose ``Command/run(arguments:)`` runs in the child.
    public static func proxy(_ isolated: any IsolatedProvider, profile: Profile) -> any Command {
        IsolatedCommand(isolated: isolated, profile: profile)
    }

    /// Runs `run` on the real command.
    public static func serve(_ call: any IsolatedCall, on provider: any Command) async throws {
        switch call.method {
        case "run": try call.reply(provider.run(arguments: call.arguments([String].self)))
        default: try call.replyUnknownMethod()
        }
    }
}

/// The host's side of an isolated command.
private struct IsolatedCommand: Command {
    let isolated: any IsolatedProvider
    let profile: Commands.Profile
    var name: String { profile.name }
    var summary: String { profile.summary }
    func run(arguments: [String]) throws -> String {
        try isolated.call("run", arguments, returning: String.self)
    }
}
