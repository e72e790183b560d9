/// When the host activates (creates and starts) an installed plugin.
///
/// A compatible plugin stays *available* (known, not loaded) until something
/// needs it. The host always activates it on the first lookup of an extension
/// point it provides; list triggers in ``PluginExport/descriptor(for:id:version:provides:services:activation:)``
/// for the other moments it must run:
///
/// ```swift
/// PluginExport.descriptor(
///     for: Coupons.self, id: "com.example.coupons", version: "1.0.0",
///     provides: [], services: [Services.Events.id],
///     activation: [.event("order.placed"), .route(prefix: "/coupons")])
/// ```
///
/// The host reads triggers in its scanner process and caches them, so it knows
/// them without running any plugin code.
@frozen
public struct ActivationTrigger: Sendable, Hashable, CustomStringConvertible {
    /// The trigger as stored in the descriptor: `startup`, `route:<prefix>`,
    /// `event:<name>`, `command:<name>`.
    public let encoded: String

    @_alwaysEmitIntoClient
    init(encoded: String) { self.encoded = encoded }

    /// Activate when the host starts (for a plugin that must subscribe to
    /// events or register routes before anyone asks for it).
    @_alwaysEmitIntoClient
    public static var startup: ActivationTrigger { ActivationTrigger(encoded: "startup") }

    /// Activate before the host routes a path that starts with `prefix`
    /// (matched on whole segments: `/shop` matches `/shop/42`, not `/shopping`).
    ///
    /// `prefix` starts with `/` and holds URL path characters only (ASCII
    /// letters, digits and `-._~!$&'()*+,;=:@%/{}`); the whole trigger is
    /// at most 200 bytes. A host refuses any other with `invalid-trigger`.
    @_alwaysEmitIntoClient
    public static func route(prefix: String) -> ActivationTrigger { ActivationTrigger(encoded: "route:\(prefix)") }

    /// Activate before the host delivers an event called `name`.
    ///
    /// `name` holds ASCII letters, digits, `.`, `-` and `_` only; the whole
    /// trigger is at most 200 bytes. A host refuses any other with
    /// `invalid-trigger`.
    @_alwaysEmitIntoClient
    public static func event(_ name: String) -> ActivationTrigger { ActivationTrigger(encoded: "event:\(name)") }

    /// Declares that the plugin provides the command `name` (the
    /// `plugboard.command` point), so that `plugboard run name` activates
    /// this plugin, not every plugin that provides commands. A plugin that
    /// declares one `command` trigger declares every command it provides:
    /// plugins that declare none are activated to learn their commands'
    /// names, as before.
    ///
    /// `name` holds ASCII letters, digits, `.`, `-` and `_` only; the whole
    /// trigger is at most 200 bytes. A host refuses any other with
    /// `invalid-trigger`. New in SDK 2.2 (hosts before it refuse the kind).
    @_alwaysEmitIntoClient
    public static func command(_ name: String) -> ActivationTrigger { ActivationTrigger(encoded: "command:\(name)") }

    public var description: String { encoded }
}
