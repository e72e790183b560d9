extension StringProtocol {
    /// Without the spaces and tabs at either end (what Foundation's
    /// `trimmingCharacters(in: .whitespaces)` removed), and a lone carriage
    /// return.
    package func trimmingBlanks() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\u{A0}" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(self[first...last])
    }
}

extension UInt8 {
    /// Two uppercase hex digits (`0A`), as `String(format: "%02X")` wrote.
    package var hexDigits: String {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: [digits[Int(self >> 4)], digits[Int(self & 0xF)]], as: UTF8.self)
    }
}
