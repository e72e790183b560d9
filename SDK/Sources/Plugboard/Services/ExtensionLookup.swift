/// The providers of an extension point a plugin publishes itself: a format
/// registry that exporter plugins add to, say.
///
/// The point (its `ExtensionPoint` type and provider protocol) lives in an
/// interface library in the plugins directory's `lib/`, linked by the
/// publishing plugin and by the plugins that provide to it; those name the
/// publisher in their `requires:` (see ``PluginRequirement``), so they
/// activate after it. The host need not know the point: the first lookup
/// declares it.
///
/// ```swift
/// let exporters = try context.service(Services.Extensions.self)
/// // later, when they are needed (not in init: providers activate after this plugin)
/// for exporter in exporters.providers(of: Exporters.self) { ... }
/// ```
///
/// Providers of plugins running in process are found; an isolated plugin
/// cannot use this service (its host refuses it with
/// `isolation-unsupported-service`).
public protocol ExtensionLookup: Sendable {
    /// The providers of `point` contributed by active plugins, activating
    /// the available plugins that provide it first.
    func providers<Point: ExtensionPoint>(of point: Point.Type) -> [Point.Provider]
}
