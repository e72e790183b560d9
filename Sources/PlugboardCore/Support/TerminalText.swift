/// Text from a plugin file or plugin code, made safe to show a person: no
/// byte of it can move the cursor, clear the screen, start a new line that
/// looks like the tool's own, or reorder what follows.
///
/// C0 and C1 controls, ESC, DEL, newlines and the Unicode bidirectional
/// controls become visible escapes (`\n`, `\t`, `\r`, `\u{1B}`, ...), and
/// text longer than `limit` characters is cut with an ellipsis saying how
/// much was left out. JSON output never goes through this: it is exact.
package enum TerminalText {
    /// The cap for one name, id, version, trigger or file name.
    package static let nameLimit = 200
    /// The cap for one reason, message or line of output.
    package static let messageLimit = 4000

    /// `escaped` for a `String`: the common case (printable ASCII within
    /// the limit) checked on its contiguous bytes, not through a generic view.
    package static func escaped(_ text: String, limit: Int = messageLimit) -> String {
        var text = text
        let plain = text.withUTF8 { bytes in bytes.count <= limit && bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
        return plain ? text : escaped(text[...], limit: limit)
    }

    package static func escaped(_ text: some StringProtocol, limit: Int = messageLimit) -> String {
        // Most text is printable ASCII within the limit: nothing to escape.
        if text.utf8.count <= limit, text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return String(text) }
        var out = ""
        var shown = 0
        var characters = text.unicodeScalars.makeIterator()
        while let scalar = characters.next() {
            if shown >= limit {
                var rest = 1
                while characters.next() != nil { rest += 1 }
                return out + "… (\(rest) more characters)"
            }
            out += visible(scalar)
            shown += 1
        }
        return out
    }

    /// One scalar as the terminal may receive it.
    private static func visible(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x0A: "\\n"
        case 0x0D: "\\r"
        case 0x09: "\\t"
        case 0x00..<0x20, 0x7F, 0x80..<0xA0,
             // Bidirectional controls: they reorder the text after them.
             0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
            "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        default: String(scalar)
        }
    }
}
