import Foundation
import Plugboard

/// Any JSON value, decoded strictly: `true` is a boolean and `1` an integer,
/// never each other (Foundation's JSONSerialization blurs the two).
enum JSONValue: Decodable, Sendable, Equatable {
    case null
    case value(ConfigValue)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .value(.bool(value)); return }
        if let value = try? container.decode(Int.self) { self = .value(.int(value)); return }
        if let value = try? container.decode(Double.self) { self = .value(.double(value)); return }
        if let value = try? container.decode(String.self) { self = .value(.string(value)); return }
        if let values = try? container.decode([JSONValue].self) {
            self = .value(.array(values.compactMap(\.configValue)))
            return
        }
        let object = try container.decode([String: JSONValue].self)
        self = .value(.object(object.compactMapValues(\.configValue)))
    }

    var configValue: ConfigValue? {
        if case let .value(value) = self { return value }
        return nil
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
