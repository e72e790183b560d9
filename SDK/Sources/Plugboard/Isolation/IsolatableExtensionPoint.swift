/// An extension point whose providers a host can run in a child process
/// (isolated) as well as in its own (the default), called the same way.
///
/// A plugin author writes nothing for it: the same `.so` runs either way. The
/// author of the *point* (the host, or an interface library) adds three
/// functions, so the point's requirements can cross a process:
///
/// - ``profile(of:)``, in the child: values the host-side proxy answers
///   without a call (a command's name, say), read once per start.
/// - ``proxy(_:profile:)``, in the host: a provider whose every requirement
///   forwards to the child with ``IsolatedProvider/call(_:_:returning:)``.
/// - ``serve(_:on:)``, in the child: runs the requirement a call names on the
///   real provider and replies with its result.
///
/// ```swift
/// public protocol Greeter: Sendable {
///     func greet(_ name: String) async throws -> String
/// }
///
/// public enum Greeters: IsolatableExtensionPoint {
///     public typealias Provider = any Greeter
///     @_alwaysEmitIntoClient
///     public static var interface: Interface { Interface(id: "com.example.greeter", version: SemanticVersion(1, 0)) }
///
///     public static func profile(of provider: any Greeter) -> [String] { [] }
///     public static func proxy(_ isolated: any IsolatedProvider, profile: [String]) -> any Greeter {
///         GreeterProxy(isolated: isolated)
///     }
///     public static func serve(_ call: any IsolatedCall, on provider: any Greeter) async throws {
///         switch call.method {
///         case "greet": try call.reply(await provider.greet(call.arguments(String.self)))
///         default: try call.replyUnknownMethod()
///         }
///     }
/// }
///
/// struct GreeterProxy: Greeter {
///     let isolated: any IsolatedProvider
///     func greet(_ name: String) async throws -> String {
///         try await isolated.suspendingCall("greet", name, returning: String.self)
///     }
/// }
/// ```
///
/// Requirements that cross must be able to fail (`throws`): an isolated
/// call can time out, or the child can crash. Arguments and results must be
/// `Codable & Sendable`. A host refuses to isolate a plugin that provides a
/// point without this conformance, before any of the plugin's code runs.
///
/// The module that declares the point must be loaded in the child too: the
/// host's own program (the child is the host restarted in isolation mode),
/// the SDK, or an interface library the plugin links.
public protocol IsolatableExtensionPoint: ExtensionPoint, SendableMetatype {
    /// What the proxy knows without a call.
    associatedtype Profile: Codable & Sendable
    /// In the child: the profile of `provider`, read once per child start.
    static func profile(of provider: Provider) -> Profile
    /// In the host: a provider that forwards every requirement to `isolated`.
    static func proxy(_ isolated: any IsolatedProvider, profile: Profile) -> Provider
    /// In the child: runs the requirement `call` names on `provider` and
    /// replies (``IsolatedCall/reply(_:)``). An error thrown here reaches the
    /// host's caller as the host's error with code `plugin-threw` and the
    /// error's text (its type does not cross).
    static func serve(_ call: any IsolatedCall, on provider: Provider) async throws
}

/// The host's end of one isolated provider: what a proxy calls.
///
/// ``call(_:_:returning:)`` blocks the calling thread until the child
/// replies or the call's deadline passes; an `async` requirement's proxy
/// calls ``suspendingCall(_:_:returning:)`` instead, which suspends (SDK
/// 2.3). Both throw the host's error for a crashed or hung child
/// (`plugin-crashed`, `plugin-timeout`) or the error the provider threw.
public protocol IsolatedProvider: Sendable {
    /// Calls requirement `method` of the provider in the child with `arguments`.
    func call<Arguments: Encodable & Sendable, Result: Decodable & Sendable>(
        _ method: String, _ arguments: Arguments, returning: Result.Type
    ) throws -> Result
}

/// One call the child received for a provider: what ``IsolatableExtensionPoint/serve(_:on:)`` answers.
public protocol IsolatedCall {
    /// The requirement's name, as the proxy passed it.
    var method: String { get }
    /// The call's arguments, decoded as `type`.
    func arguments<Arguments: Decodable>(_ type: Arguments.Type) throws -> Arguments
    /// Replies with the requirement's result.
    func reply<Result: Encodable>(_ result: Result) throws
    /// Replies that this provider has no requirement named ``method``
    /// (a host newer than the child's interface).
    func replyUnknownMethod() throws
}

extension IsolatedProvider {
    /// The same call from async code: the caller's task suspends while the
    /// host waits for the child on a thread of its own (at most 512 across
    /// the host), so no thread of Swift's pool is held; cancelling the task cancels the call (the
    /// plugin's task serving it sees `Task.isCancelled`) and throws
    /// `CancellationError`. For a proxy's `async` requirements. (SDK 2.3)
    ///
    /// An end that is not the host library's (a test's) blocks the caller's thread instead.
    public func suspendingCall<Arguments: Encodable & Sendable, Result: Decodable & Sendable>(
        _ method: String, _ arguments: Arguments, returning: Result.Type
    ) async throws -> Result {
        if let suspending = self as? any SuspendingIsolatedProvider {
            return try await suspending.callSuspending(method, arguments, returning: returning)
        }
        return try call(method, arguments, returning: returning)
    }
}

/// The host's end of an isolated provider that suspends a caller (SDK 2.3):
/// what ``IsolatedProvider/suspendingCall(_:_:returning:)`` uses. Adopted by
/// the host library only; not a requirement of ``IsolatedProvider``, so a
/// provider end of an older host still conforms.
@_spi(PlugboardHost)
public protocol SuspendingIsolatedProvider: IsolatedProvider {
    /// Named apart from ``IsolatedProvider/suspendingCall(_:_:returning:)``,
    /// so that a call can only mean the requirement.
    func callSuspending<Arguments: Encodable & Sendable, Result: Decodable & Sendable>(
        _ method: String, _ arguments: Arguments, returning: Result.Type
    ) async throws -> Result
}
