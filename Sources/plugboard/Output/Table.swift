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
            max(header[column].count, rows.map { $0[column].text.count }.max() ?? 0)
        }
        func line(_ cells: [Cell]) -> String {
            cells.enumerated().map { column, cell in
                let padded = column == cells.count - 1 ? cell.text : cell.text.padding(to: widths[column])
                return cell.style.map { Terminal.style(padded, $0) } ?? padded
            }.joined(separator: "  ")
        }
        return ([line(header.map { Cell(text: $0, style: .bold) })] + rows.map(line)).joined(separator: "\n")
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
