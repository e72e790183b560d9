/// What the host hands a plugin when it creates it: who the plugin is and the
/// host services it was granted.
///
/// ```swift
/// init(context: PluginContext) throws {
///     self.log = try context.service(Services.Logging.self)
/// }
/// ```
public final class PluginContext: Sendable {
    /// The plugin's id, as declared in its entry point.
    public let pluginID: String
    /// The plugin's version, as declared in its entry point.
    public let pluginVersion: SemanticVersion
    /// Service ids the plugin declared in its entry point.
    public let declaredServices: Set<String>
    private let granted: [String: any Sendable]
    private let denied: [String: String]

    /// Made by the host only.
    @_spi(PlugboardHost)
    public init(
        pluginID: String, pluginVersion: SemanticVersion, declaredServices: Set<String>,
        granted: [String: any Sendable], denied: [String: String]
    ) {
        self.pluginID = pluginID
        self.pluginVersion = pluginVersion
        self.declaredServices = declaredServices
        self.granted = granted
        self.denied = denied
    }

    /// Returns a host service the plugin declared and the host granted.
    ///
    /// - Throws: ``ServiceError`` with code ``ServiceError/Code/serviceNotDeclared``
    ///   when the service is missing from the entry point's `services:`,
    ///   ``ServiceError/Code/serviceDenied`` when the host's configuration denies it,
    ///   ``ServiceError/Code/serviceUnavailable`` when the host has none.
    public func service<Key: Services.Key>(_ key: Key.Type) throws(ServiceError) -> Key.Service {
        let id = Key.id
        guard declaredServices.contains(id) else {
            throw ServiceError(.serviceNotDeclared, "plugin \(pluginID) asked for service '\(id)' but did not declare it; add it to `services:` in the plugin's PluginExport.descriptor call")
        }
        if let reason = denied[id] {
            throw ServiceError(.serviceDenied, "plugin \(pluginID) is denied service '\(id)' by the host: \(reason)")
        }
        guard let service = granted[id] as? Key.Service else {
            throw ServiceError(.serviceUnavailable, "plugin \(pluginID) asked for service '\(id)', which this host does not offer")
        }
        return service
    }

    /// Whether plugin `id` was active in the host when this plugin was
    /// created. The plugins a plugin requires, optional ones too, are
    /// activated before it, so this tells whether an optional dependency is
    /// there (see ``PluginRequirement``).
    public func hasPlugin(_ id: String) -> Bool {
        (granted[Self.activePluginsKey] as? Set<String>)?.contains(id) ?? false
    }

    /// Host only: where the host puts the active plugins' ids among what it grants.
    @_spi(PlugboardHost)
    public static var activePluginsKey: String { "plugboard.active-plugins" }

    /// Whether ``service(_:)`` would succeed for `key`.
    public func has<Key: Services.Key>(_ key: Key.Type) -> Bool {
        (try? service(key)) != nil
    }
}
