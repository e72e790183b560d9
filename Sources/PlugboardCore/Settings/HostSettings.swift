import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard

/// The host's settings file (`--config FILE`): per plugin, whether it is
/// enabled, which services it is denied, and overrides of its configuration
/// defaults. (Not ``PluginHost/Configuration``, which says how the host runs;
/// not a plugin's own configuration, `Plugboard.Services.Configuration`.)
///
/// ```json
/// {
///   "plugins": {
///     "dev.plugboard.example.coupons": {
///       "enabled": true,
///       "deniedServices": ["plugboard.storage"],
///       "isolated": true,
///       "children": 2,
///       "sandboxed": true,
///       "grants": { "tcpConnect": [443], "readPaths": ["/etc/ssl/certs"] },
///       "config": { "currency": "EUR" }
///     }
///   }
/// }
/// ```
///
/// Reading never fails as a whole: a malformed file, a wrong type or an
/// unknown key becomes a ``HostDiagnostic`` naming the file and key path,
/// and the rest of the file still applies.
public struct HostSettings: Sendable {
    public struct PluginSettings: Sendable, Equatable {
        public var enabled = true
        public var deniedServices: Set<String> = []
        public var overrides: [String: ConfigValue] = [:]
        /// Whether the plugin runs in a child process (nil: the host decides;
        /// see ``PluginHost/Configuration/Isolation``).
        public var isolated: Bool?
        /// Whether the plugin runs in a sandboxed child (nil: the host
        /// decides; `true` implies a child; see ``PluginSandbox``).
        public var sandboxed: Bool?
        /// What the plugin is granted when sandboxed (`"grants"`; nil: the
        /// host's configuration decides; see ``PluginSandbox/Grants``).
        public var grants: PluginSandbox.Grants?
        /// How many children run it when isolated, 1 to 64 (`"children"`;
        /// nil: the host decides; see ``PluginIsolation/children``).
        public var children: Int?
        /// Its children's bounds when isolated (`"resources"`; nil: the
        /// host's; see ``ResourceSettings``).
        public var resources: ResourceSettings?

        public init(
            enabled: Bool = true, deniedServices: Set<String> = [], overrides: [String: ConfigValue] = [:], isolated: Bool? = nil,
            sandboxed: Bool? = nil
        ) {
            self.enabled = enabled
            self.deniedServices = deniedServices
            self.overrides = overrides
            self.isolated = isolated
            self.sandboxed = sandboxed
        }
    }

    /// Settings per plugin id.
    public var plugins: [String: PluginSettings]
    /// The file it came from, for messages.
    public var file: String?
    /// Problems found while reading.
    public var diagnostics: [HostDiagnostic]

    public init(plugins: [String: PluginSettings] = [:], file: String? = nil) {
        self.plugins = plugins
        self.file = file
        self.diagnostics = []
    }

    /// Reads `path`. A missing or malformed file yields an empty configuration
    /// with an error diagnostic.
    public static func load(from path: String) -> HostSettings {
        guard let data = FileManager.default.contents(atPath: path) else {
            var configuration = HostSettings(file: path)
            configuration.report(.error, "config-unreadable", "cannot read the configuration file; check the path and permissions")
            return configuration
        }
        return parse(data, file: path)
    }

    /// Reads a configuration file's contents (`file` names it in diagnostics).
    package static func parse(_ data: Data, file: String?) -> HostSettings {
        var configuration = HostSettings(file: file)
        let document: JSONValue
        do {
            document = try JSONValue.parse(data)
        } catch {
            configuration.report(.error, "config-malformed", "not valid JSON: \(error.message); nothing in it was applied")
            return configuration
        }
        guard case let .object(root) = document else {
            configuration.report(.error, "config-invalid-type", "the top level must be an object with a \"plugins\" key")
            return configuration
        }
        for key in root.keys.sorted() where key != "plugins" {
            configuration.report(.warning, "config-unknown-key", "unknown key '\(key)'; ignored", keyPath: key)
        }
        guard let plugins = root["plugins"] else { return configuration }
        guard case let .object(entries) = plugins else {
            configuration.report(.error, "config-invalid-type", "must be an object keyed by plugin id, found \(plugins.typeName)", keyPath: "plugins")
            return configuration
        }
        for (id, entry) in entries.sorted(by: { $0.key < $1.key }) {
            configuration.plugins[id] = configuration.settings(id, entry)
        }
        return configuration
    }

    private mutating func settings(_ id: String, _ entry: JSONValue) -> PluginSettings {
        var settings = PluginSettings()
        let path = "plugins.\(id)"
        guard case let .object(fields) = entry else {
            report(.error, "config-invalid-type", "must be an object, found \(entry.typeName)", keyPath: path)
            return settings
        }
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            switch (key, value) {
            case let ("enabled", .bool(enabled)):
                settings.enabled = enabled
            case let ("isolated", .bool(isolated)):
                settings.isolated = isolated
            case let ("sandboxed", .bool(sandboxed)):
                settings.sandboxed = sandboxed
            case let ("children", .int(children)) where PluginIsolation.childrenRange.contains(children):
                settings.children = children
            case let ("grants", .object(fields)):
                settings.grants = grants(fields, at: "\(path).grants")
            case let ("resources", .object(fields)):
                settings.resources = resources(fields, at: "\(path).resources")
            case let ("deniedServices", .array(items)):
                for item in items {
                    guard case let .string(service) = item else {
                        report(.error, "config-invalid-type", "service ids must be strings, found \(item.typeName)", keyPath: "\(path).deniedServices")
                        continue
                    }
                    settings.deniedServices.insert(service)
                }
            case let ("config", .object(overrides)):
                for (key, value) in overrides.sorted(by: { $0.key < $1.key }) {
                    guard let value = value.configValue else {
                        report(.error, "config-invalid-type", "null is not a setting value; the default is kept", keyPath: "\(path).config.\(key)")
                        continue
                    }
                    settings.overrides[key] = value
                }
            case ("enabled", _):
                report(.error, "config-invalid-type", "must be a boolean, found \(value.typeName)\(value.configValue.map { " \($0)" } ?? ""); the plugin stays enabled", keyPath: "\(path).enabled")
            case ("isolated", _), ("sandboxed", _):
                report(.error, "config-invalid-type", "must be a boolean, found \(value.typeName)\(value.configValue.map { " \($0)" } ?? ""); the host's default applies", keyPath: "\(path).\(key)")
            case ("children", _):
                report(.error, "config-invalid-type", "must be a whole number from \(PluginIsolation.childrenRange.lowerBound) to \(PluginIsolation.childrenRange.upperBound) (the children of its pool), found \(value.typeName)\(value.configValue.map { " \($0)" } ?? ""); the host's default applies", keyPath: "\(path).children")
            case ("deniedServices", _), ("config", _), ("grants", _), ("resources", _):
                report(.error, "config-invalid-type", "must be \(key == "deniedServices" ? "an array of service ids" : "an object"), found \(value.typeName)", keyPath: "\(path).\(key)")
            default:
                report(.warning, "config-unknown-key", "unknown key '\(key)' (known: enabled, deniedServices, isolated, children, sandboxed, grants, resources, config); ignored", keyPath: "\(path).\(key)")
            }
        }
        return settings
    }

    mutating func report(_ severity: HostDiagnostic.Severity, _ code: HostDiagnostic.Code, _ message: String, keyPath: String? = nil, plugin: String? = nil) {
        diagnostics.append(HostDiagnostic(severity, code: code, message: message, file: file, keyPath: keyPath, plugin: plugin))
    }

    /// The merged view for plugin `id`: its defaults with this file's overrides,
    /// plus a diagnostic per override that names an unknown key or has the wrong type.
    package func merged(for id: String, defaults: [String: ConfigValue]) -> (values: [String: ConfigValue], diagnostics: [HostDiagnostic]) {
        var values = defaults
        var problems: [HostDiagnostic] = []
        for (key, value) in (plugins[id]?.overrides ?? [:]).sorted(by: { $0.key < $1.key }) {
            let keyPath = "plugins.\(id).config.\(key)"
            guard let fallback = defaults[key] else {
                let known = defaults.keys.sorted().joined(separator: ", ")
                problems.append(HostDiagnostic(.warning, code: "config-unknown-key",
                    message: "plugin \(id) has no setting '\(key)' (known: \(known.isEmpty ? "none" : known)); ignored",
                    file: file, keyPath: keyPath, plugin: id))
                continue
            }
            if Self.sameType(fallback, value) {
                values[key] = Self.widened(value, like: fallback)
            } else {
                problems.append(HostDiagnostic(.error, code: "config-type-mismatch",
                    message: "expected \(fallback.typeName) like the default \(fallback), found \(value.typeName) \(value); the default is kept",
                    file: file, keyPath: keyPath, plugin: id))
            }
        }
        return (values, problems)
    }

    /// An integer is accepted where the default is a number.
    private static func sameType(_ a: ConfigValue, _ b: ConfigValue) -> Bool {
        a.typeName == b.typeName || (a.typeName == "number" && b.typeName == "integer")
    }

    private static func widened(_ value: ConfigValue, like fallback: ConfigValue) -> ConfigValue {
        if case .double = fallback, case let .int(number) = value { return .double(Double(number)) }
        return value
    }
}
