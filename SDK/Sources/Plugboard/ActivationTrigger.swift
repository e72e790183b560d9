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
    /// The trigger as stored in the descriptor: `startup`, `route:<prefix>`, `event:<name>`.
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

    public var description: String { encoded }
}
