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

        init(text: String, style: Terminal.Style? = nil) {
            self.text = Terminal.safe(text, limit: TerminalText.nameLimit)
            self.style = style
        }
    }

    func render() -> String {
        let widths = header.indices.map { column in
            max(header[column].width, rows.map { $0[column].text.width }.max() ?? 0)
        }
        // One string appended in place: `plugboard list` renders a row per installed plugin.
        var out = ""
        func append(_ cells: [Cell]) {
            for (column, cell) in cells.enumerated() {
                if column > 0 { out += "  " }
                let padding = column == cells.count - 1 ? 0 : max(0, widths[column] - cell.text.width)
                if let style = cell.style {
                    out += Terminal.style(cell.text + String(repeating: " ", count: padding), style)
                } else {
                    out += cell.text
                    if padding > 0 { out += String(repeating: " ", count: padding) }
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
}

extension String {
    /// Columns on a terminal: characters, counted as bytes when all are ASCII
    /// (plugin data mostly is; counting characters walks grapheme breaks).
    var width: Int {
        utf8.allSatisfy { $0 < 0x80 } ? utf8.count : count
    }

    func padding(to width: Int) -> String {
        let own = self.width
        return own >= width ? self : self + String(repeating: " ", count: width - own)
    }
}
