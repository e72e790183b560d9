/// A configuration value: what JSON can hold.
public enum ConfigValue: Sendable, Hashable, CustomStringConvertible {
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([ConfigValue])
    case object([String: ConfigValue])

    /// The JSON type name, for messages.
    public var typeName: String {
        switch self {
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    public var description: String {
        switch self {
        case let .bool(value): "\(value)"
        case let .int(value): "\(value)"
        case let .double(value): "\(value)"
        case let .string(value): "\"\(value)\""
        case let .array(values): "[\(values.map(\.description).joined(separator: ", "))]"
        case let .object(values): "{\(values.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", "))}"
        }
    }
}

/// The configuration a plugin sees: the defaults it ships (``Plugin/defaultConfiguration``)
/// with the host configuration's overrides for this plugin merged in, key by key.
///
/// Overrides with a key the plugin has no default for, or a value of another
/// type than the default, are reported by the host (file and key path) and
/// not applied.
public protocol PluginConfiguration: Sendable {
    /// Every key with its merged value.
    var values: [String: ConfigValue] { get }
}

extension PluginConfiguration {
    /// The merged value for `key`, nil if the plugin has no such key.
    public subscript(key: String) -> ConfigValue? { values[key] }

    /// The value for `key` if it is a string.
    public func string(_ key: String) -> String? {
        if case let .string(value)? = values[key] { return value }
        return nil
    }

    /// The value for `key` if it is an integer.
    public func int(_ key: String) -> Int? {
        if case let .int(value)? = values[key] { return value }
        return nil
    }

    /// The value for `key` if it is a number (integers included).
    public func double(_ key: String) -> Double? {
        switch values[key] {
        case let .double(value)?: value
        case let .int(value)?: Double(value)
        default: nil
        }
    }

    /// The value for `key` if it is a boolean.
    public func bool(_ key: String) -> Bool? {
        if case let .bool(value)? = values[key] { return value }
        return nil
    }
}
