import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard

/// Any JSON value, decoded strictly: `true` is a boolean and `1` an integer,
/// never each other (Foundation's JSONSerialization blurs the two), and
/// `null` is kept so it can be reported where it does not belong.
package indirect enum JSONValue: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    /// A whole number above `Int.max` (kept exact for the demo's screens,
    /// which hand sections on as JSON; a configuration reads it as a number).
    case unsigned(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Int.self) { self = .int(value); return }
        if let value = try? container.decode(UInt64.self) { self = .unsigned(value); return }
        if let value = try? container.decode(Double.self) { self = .double(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let values = try? container.decode([JSONValue].self) { self = .array(values); return }
        self = .object(try container.decode([String: JSONValue].self))
    }

    /// Written back as it was read (the demo's screens hand each section on as its own JSON).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(value): try container.encode(value)
        case let .int(value): try container.encode(value)
        case let .unsigned(value): try container.encode(value)
        case let .double(value): try container.encode(value)
        case let .string(value): try container.encode(value)
        case let .array(values): try container.encode(values)
        case let .object(fields): try container.encode(fields)
        }
    }

    /// The JSON type name, for messages (the same names as ``ConfigValue``).
    var typeName: String { configValue?.typeName ?? "null" }

    /// As a configuration value; nil for `null` (nulls inside are dropped).
    var configValue: ConfigValue? {
        switch self {
        case .null: nil
        case let .bool(value): .bool(value)
        case let .int(value): .int(value)
        case let .unsigned(value): .double(Double(value))
        case let .double(value): .double(value)
        case let .string(value): .string(value)
        case let .array(values): .array(values.compactMap(\.configValue))
        case let .object(fields): .object(fields.compactMapValues(\.configValue))
        }
    }

    /// Parses a whole document; the error text says where it broke.
    package static func parse(_ data: Data) throws(JSONParseError) -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch let DecodingError.dataCorrupted(context) {
            throw JSONParseError(message: context.debugDescription)
        } catch {
            throw JSONParseError(message: "\(error)")
        }
    }
}

package struct JSONParseError: Error, Sendable {
    package let message: String
}
