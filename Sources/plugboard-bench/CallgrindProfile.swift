/// Reads callgrind's output format (valgrind's docs, "Callgrind Format
/// Specification"): the first event's self cost of each object (executable
/// or shared library).
enum CallgrindProfile {
    static func selfCostByObject(_ text: String) -> [String: Double] {
        var names: [String: String] = [:]  // "(3)" -> "/usr/lib/libc.so.6"
        var object = "?"
        var costs: [String: Double] = [:]
        var nextLineIsCallCost = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let first = line.first else { continue }
            if first.isNumber || first == "+" || first == "-" || first == "*" {
                // "position cost...": after a calls= line, the call's inclusive cost, not this function's own.
                if nextLineIsCallCost {
                    nextLineIsCallCost = false
                    continue
                }
                let fields = line.split(separator: " ")
                if fields.count >= 2, let cost = Double(fields[1]) { costs[object, default: 0] += cost }
            } else if line.hasPrefix("ob=") {
                object = resolve(line.dropFirst(3), &names)
            } else if line.hasPrefix("calls=") {
                nextLineIsCallCost = true
            }
        }
        return costs
    }

    /// A compressed name: "(id) name" defines it, "(id)" refers to it.
    private static func resolve(_ field: Substring, _ names: inout [String: String]) -> String {
        guard field.hasPrefix("("), let close = field.firstIndex(of: ")") else { return String(field) }
        let id = String(field[...close])
        let rest = field[field.index(after: close)...].drop { $0 == " " }
        if rest.isEmpty { return names[id] ?? id }
        names[id] = String(rest)
        return String(rest)
    }
}
