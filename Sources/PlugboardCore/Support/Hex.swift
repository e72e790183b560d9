
/// Lowercase hexadecimal text of bytes and back: storage file names and
/// SHA-256 digests.
package enum Hex {
    package static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` spells, or nil if it is not lowercase hex of whole bytes.
    package static func decode(_ text: String) -> [UInt8]? {
        let hex = Array(text.utf8)
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let high = nibble(hex[index]), let low = nibble(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
