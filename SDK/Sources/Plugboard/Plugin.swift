/// The type a plugin author writes: one per plugin `.so`.
///
/// ## Requirements
/// - ``init(context:)`` runs once per load, on the host's loading thread. Keep it
///   cheap; throw to refuse to load (the host marks the plugin `failed` with your
///   error and carries on with the others). Keep `context` if you need services.
/// - ``activate()`` runs right after this plugin's init (plugins are created
///   and activated one after the other, in file-name order); throw to fail.
/// - ``deactivate()`` runs at shutdown, in reverse activation order, and when a
///   hot reload retires this instance. It must not throw and should be quick.
/// - ``contributions()`` is read once, after ``activate()``. Every interface
///   named in `provides:` of your ``PluginExport`` entry point needs a provider here.
/// - Instances are shared across threads: make them `Sendable`.
///
/// Export it with one C entry point:
///
/// ```swift
/// @_cdecl("plugboard_entry")
/// public func plugboardEntry() -> UnsafeRawPointer {
///     PluginExport.descriptor(
///         for: Greeter.self, id: "com.example.greeter", version: "1.0.0",
///         provides: [Commands.interface])
/// }
/// ```
public protocol Plugin: AnyObject, Sendable {
    /// Creates the plugin with the host's context.
    init(context: PluginContext) throws
    /// Starts the plugin. The default does nothing.
    func activate() throws
    /// Stops the plugin. The default does nothing.
    func deactivate()
    /// The providers this plugin offers, one per extension point it provides.
    func contributions() -> [Contribution]
    /// Configuration defaults: every key the plugin reads, with its default
    /// value and type. The host merges its overrides in (see
    /// ``Services/Configuration``). The default is empty.
    static var defaultConfiguration: [String: ConfigValue] { get }
}

extension Plugin {
    /// No configuration keys.
    public static var defaultConfiguration: [String: ConfigValue] { [:] }
    /// Does nothing.
    public func activate() throws {}
    /// Does nothing.
    public func deactivate() {}
}
