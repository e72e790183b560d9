import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// Writing for people: colour only when the stream is a terminal and
/// `NO_COLOR` is unset.
package enum Terminal {
    package static let colorOut = isatty(STDOUT_FILENO) != 0 && getenv("NO_COLOR") == nil
    package static let colorErr = isatty(STDERR_FILENO) != 0 && getenv("NO_COLOR") == nil

    package enum Style: String {
        case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", cyan = "36"
    }

    package static func style(_ text: String, _ style: Style, stderr: Bool = false) -> String {
        (stderr ? colorErr : colorOut) ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// Text from a plugin file or plugin code, escaped and capped for a
    /// person to read (see `TerminalText`): used wherever such text is printed.
    package static func safe(_ text: some StringProtocol, limit: Int = TerminalText.messageLimit) -> String {
        TerminalText.escaped(text, limit: limit)
    }

    /// `safe` for a `String`: checked on its contiguous bytes (a table of
    /// thousands of plugins escapes every cell).
    package static func safe(_ text: String, limit: Int = TerminalText.messageLimit) -> String {
        TerminalText.escaped(text, limit: limit)
    }

    package static func error(_ message: String) {
        writeErr("\(style("error:", .red, stderr: true)) \(message)\n")
    }

    package static func writeErr(_ text: String) { write(text, to: STDERR_FILENO) }

    package static func write(_ text: String) { write(text, to: STDOUT_FILENO) }

    /// Unbuffered, whole-string writes: lines from several threads never interleave mid-line.
    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 { if errno == EINTR { continue } else { return } }
            bytes = bytes.dropFirst(written)
        }
    }
}
