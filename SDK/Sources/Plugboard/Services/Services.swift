/// The host services a plugin can ask for (the Service Provider Interface).
///
/// List the ids of those you need in `services:` of your entry point, then
/// fetch them from the context:
///
/// ```swift
/// PluginExport.descriptor(..., services: [Services.Logging.id, Services.Storage.id])
/// // in init(context:)
/// let log = try context.service(Services.Logging.self)
/// ```
///
/// The host may deny any of them to a plugin in its configuration; asking for
/// a service not declared or not granted throws ``ServiceError``.
public enum Services {
    /// Names a host service and the type a plugin receives for it. A host
    /// that offers a service of its own declares a key like these, in an
    /// interface package it shares with its plugins.
    public protocol Key {
        /// The type a plugin receives, usually `any SomeServiceProtocol`.
        associatedtype Service: Sendable
        /// Stable id, written in a plugin's `services:` list.
        static var id: String { get }
    }

    /// A logger labelled with the plugin id.
    public enum Logging: Key {
        /// What the plugin receives.
        public typealias Service = any PluginLogger
        /// `plugboard.logging`: list it in `services:`.
        public static var id: String { "plugboard.logging" }
    }

    /// Key-value storage private to the plugin, persisted by the host.
    public enum Storage: Key {
        /// What the plugin receives.
        public typealias Service = any KeyValueStore
        /// `plugboard.storage`: list it in `services:`.
        public static var id: String { "plugboard.storage" }
    }

    /// The plugin's configuration: its defaults merged with the host's overrides.
    public enum Configuration: Key {
        /// What the plugin receives.
        public typealias Service = any PluginConfiguration
        /// `plugboard.configuration`: list it in `services:`.
        public static var id: String { "plugboard.configuration" }
    }

    /// Events between plugins, through the host.
    public enum Events: Key {
        /// What the plugin receives.
        public typealias Service = any EventBus
        /// `plugboard.events`: list it in `services:`.
        public static var id: String { "plugboard.events" }
    }

    /// The providers other plugins contribute to an extension point this
    /// plugin publishes (see ``ExtensionLookup``).
    public enum Extensions: Key {
        /// What the plugin receives.
        public typealias Service = any ExtensionLookup
        /// `plugboard.extensions`: list it in `services:`.
        public static var id: String { "plugboard.extensions" }
    }

    /// Navigation by path to features of any plugin.
    public enum Router: Key {
        /// What the plugin receives.
        public typealias Service = any Plugboard.Router
        /// `plugboard.router`: list it in `services:`.
        public static var id: String { "plugboard.router" }
    }
}
