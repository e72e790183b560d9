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
