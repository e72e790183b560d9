import Foundation
import Plugboard

/// Any JSON value, decoded strictly: `true` is a boolean and `1` an integer,
/// never each other (Foundation's JSONSerialization blurs the two), and
/// `null` is kept so it can be reported where it does not belong.
indirect enum JSONValue: Decodable, Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Int.self) { self = .int(value); return }
        if let value = try? container.decode(Double.self) { self = .double(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let values = try? container.decode([JSONValue].self) { self = .array(values); return }
        self = .object(try container.decode([String: JSONValue].self))
    }

    /// The JSON type name, for messages (the same names as ``ConfigValue``).
    var typeName: String { configValue?.typeName ?? "null" }

    /// As a configuration value; nil for `null` (nulls inside are dropped).
    var configValue: ConfigValue? {
        switch self {
        case .null: nil
        case let .bool(value): .bool(value)
        case let .int(value): .int(value)
        case let .double(value): .double(value)
        case let .string(value): .string(value)
        case let .array(values): .array(values.compactMap(\.configValue))
        case let .object(fields): .object(fields.compactMapValues(\.configValue))
        }
    }

    /// Parses a whole document; the error text says where it broke.
    static func parse(_ data: Data) throws(JSONParseError) -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch let DecodingError.dataCorrupted(context) {
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            throw JSONParseError(message: underlying ?? context.debugDescription)
        } catch {
            throw JSONParseError(message: "\(error)")
        }
    }
}

struct JSONParseError: Error, Sendable {
    let message: String
}
