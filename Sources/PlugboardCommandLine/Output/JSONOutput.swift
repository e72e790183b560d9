import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// One JSON document on stdout, keys sorted so output is stable, dates in ISO 8601.
package enum JSONOutput {
    package static func print<Value: Encodable>(_ value: Value) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        Terminal.write(String(decoding: data, as: UTF8.self) + "\n")
    }

    /// One compact JSON object per line (event streams).
    package static func line<Value: Encodable>(_ value: Value) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        Terminal.write(String(decoding: data, as: UTF8.self) + "\n")
    }
}
