import PlugboardCommandLine
import PlugboardHost
/// Left-aligned columns sized to their widest cell; styles do not count
/// toward width. Cells hold plugin data: each is escaped and capped as it
/// is added (`Terminal.safe`), so no cell can break a row.
struct Table {
    var header: [String]
    var rows: [[Cell]] = []

    struct Cell {
        let text: String
        var style: Terminal.Style? = nil
        /// Columns on a terminal, counted once.
        let width: Int

        init(text: String, style: Terminal.Style? = nil) {
            self.text = Terminal.safe(text, limit: TerminalText.nameLimit)
            self.style = style
            width = self.text.width
        }
    }

    func render() -> String {
        let widths = header.indices.map { column in
            max(header[column].width, rows.map { $0[column].width }.max() ?? 0)
        }
        // One string appended in place: `plugboard list` renders a row per installed plugin.
        var out = ""
        out.reserveCapacity((rows.count + 1) * (widths.reduce(0, +) + 2 * widths.count + 1))
        func append(_ cells: [Cell]) {
            for (column, cell) in cells.enumerated() {
                if column > 0 { out += "  " }
                let padding = column == cells.count - 1 ? 0 : max(0, widths[column] - cell.width)
                if let style = cell.style {
                    out += Terminal.style(cell.text + Self.spaces(padding), style)
                } else {
                    out += cell.text
                    out += Self.spaces(padding)
                }
            }
        }
        append(header.map { Cell(text: $0, style: .bold) })
        for row in rows {
            out += "\n"
            append(row)
        }
        return out
    }

    /// `count` spaces, from runs made once (`String(repeating:count:)`
    /// cost more than the rest of a row).
    private static func spaces(_ count: Int) -> String {
        count < runsOfSpaces.count ? runsOfSpaces[count] : String(repeating: " ", count: count)
    }

    private static let runsOfSpaces: [String] = {
        let run = Array(repeating: UInt8(ascii: " "), count: 64)
        return (0...64).map { String(decoding: run.prefix($0), as: UTF8.self) }
    }()
}

extension String {
    /// Columns on a terminal: characters, counted as bytes when all are ASCII
    /// (plugin data mostly is; counting characters walks grapheme breaks).
    var width: Int {
        let ascii = utf8.withContiguousStorageIfAvailable { bytes in
            var all: UInt8 = 0
            for byte in bytes { all |= byte }
            return all < 0x80
        } ?? utf8.allSatisfy { $0 < 0x80 }
        return ascii ? utf8.count : count
    }

    func padding(to width: Int) -> String {
        let own = self.width
        return own >= width ? self : self + String(repeating: " ", count: width - own)
    }
}
