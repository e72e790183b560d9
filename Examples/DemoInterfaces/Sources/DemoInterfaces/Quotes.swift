import Plugboard

/// Quotes a price in the supplier's own time: the point whose requirement
/// is `async`. Run isolated, its caller suspends while the child works
/// (``IsolatedProvider/suspendingCall(_:_:returning:)``), holding no thread
/// of Swift's pool.
public protocol Quoting: Sendable {
    /// The quote for `item`.
    func quote(_ item: String) async throws -> String
}

/// The extension point of ``Quoting`` providers.
public enum Quotes: IsolatableExtensionPoint {
    public typealias Provider = any Quoting
    @_alwaysEmitIntoClient
    public static var interface: Interface { Interface(id: "dev.plugboard.demo.quotes", version: SemanticVersion(1, 0)) }

    public static func profile(of provider: any Quoting) -> [String] { [] }

    public static func proxy(_ isolated: any IsolatedProvider, profile: [String]) -> any Quoting {
        QuotingProxy(isolated: isolated)
    }

    public static func serve(_ call: any IsolatedCall, on provider: any Quoting) async throws {
        switch call.method {
        case "quote": try call.reply(try await provider.quote(call.arguments(String.self)))
        default: try call.replyUnknownMethod()
        }
    }
}

/// An isolated provider's stand-in in the host.
struct QuotingProxy: Quoting {
    let isolated: any IsolatedProvider

    func quote(_ item: String) async throws -> String {
        try await isolated.suspendingCall("quote", item, returning: String.self)
    }
}
