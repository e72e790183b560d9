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
        let offered = granted[id]
        // Boxed by the host with the protocol's existential: read without a
        // cast to the protocol (see `GrantedService`).
        if let box = offered as? GrantedService<Key.Service> { return box.service }
        guard let service = offered as? Key.Service else {
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

/// A service as the host grants it: already a value of the service's
/// protocol type, so ``PluginContext/service(_:)`` hands it over without a
/// dynamic cast to the protocol. The first such cast of each type in a
/// process walks every loaded image's conformance records (about 0.2 ms
/// each, three of them for a plugin that asks for three services); a cast
/// to this class compares classes. Services granted unboxed (a test
/// harness's) are still cast.
@_spi(PlugboardHost)
public final class GrantedService<Service: Sendable>: Sendable {
    public let service: Service

    public init(_ service: Service) {
        self.service = service
    }
}
