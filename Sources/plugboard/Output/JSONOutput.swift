import Foundation

/// One JSON document on stdout, keys sorted so output is stable.
enum JSONOutput {
    static func print<Value: Encodable>(_ value: Value) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        Terminal.write(String(decoding: data, as: UTF8.self) + "\n")
    }

    /// One compact JSON object per line (event streams).
    static func line<Value: Encodable>(_ value: Value) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        Terminal.write(String(decoding: data, as: UTF8.self) + "\n")
    }
}
