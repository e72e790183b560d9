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
    /// - Throws: ``ServiceError`` when the service was not declared in the entry
    ///   point, was denied by the host's configuration, or the host has none.
    public func service<Key: ServiceKey>(_ key: Key.Type) throws(ServiceError) -> Key.Service {
        let id = Key.id
        guard declaredServices.contains(id) else {
            throw .notDeclared(service: id, plugin: pluginID)
        }
        if let reason = denied[id] {
            throw .denied(service: id, plugin: pluginID, reason: reason)
        }
        guard let service = granted[id] as? Key.Service else {
            throw .unavailable(service: id, plugin: pluginID)
        }
        return service
    }

    /// Whether ``service(_:)`` would succeed for `key`.
    public func has<Key: ServiceKey>(_ key: Key.Type) -> Bool {
        (try? service(key)) != nil
    }
}

/// Names a host service and the type a plugin receives for it.
public protocol ServiceKey {
    associatedtype Service: Sendable
    /// Stable id, written in a plugin's `services:` list.
    static var id: String { get }
}

/// Why a plugin could not get a service.
public enum ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The plugin asked for a service it did not list in `services:`.
    case notDeclared(service: String, plugin: String)
    /// The host's configuration denies this service to this plugin.
    case denied(service: String, plugin: String, reason: String)
    /// The host offers no such service.
    case unavailable(service: String, plugin: String)

    /// Stable machine-readable code.
    public var code: String {
        switch self {
        case .notDeclared: "service-not-declared"
        case .denied: "service-denied"
        case .unavailable: "service-unavailable"
        }
    }

    public var description: String {
        switch self {
        case let .notDeclared(service, plugin):
            "plugin \(plugin) asked for service '\(service)' but did not declare it; add it to `services:` in the plugin's PluginExport.descriptor call"
        case let .denied(service, plugin, reason):
            "plugin \(plugin) is denied service '\(service)' by the host: \(reason)"
        case let .unavailable(service, plugin):
            "plugin \(plugin) asked for service '\(service)', which this host does not offer"
        }
    }
}
