/// Reads callgrind's output format (valgrind's docs, "Callgrind Format
/// Specification"): the first event's self cost of each function, with the
/// object (executable or shared library) it is in.
enum CallgrindProfile {
    struct Function: Hashable {
        let object: String
        let name: String
    }

    static func selfCost(_ text: String) -> [Function: Double] {
        var names: [String: String] = [:]  // "(3)" -> a name, per kind of field
        var object = "?", function = "?"
        var costs: [Function: Double] = [:]
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
                if fields.count >= 2, let cost = Double(fields[1]) {
                    costs[Function(object: object, name: function), default: 0] += cost
                }
            } else if line.hasPrefix("ob=") {
                object = resolve("ob", line.dropFirst(3), &names)
            } else if line.hasPrefix("fn=") {
                function = resolve("fn", line.dropFirst(3), &names)
            } else if line.hasPrefix("cob=") {
                _ = resolve("ob", line.dropFirst(4), &names)
            } else if line.hasPrefix("cfn=") {
                _ = resolve("fn", line.dropFirst(4), &names)
            } else if line.hasPrefix("calls=") {
                nextLineIsCallCost = true
            }
        }
        return costs
    }

    /// A compressed name: "(id) name" defines it, "(id)" refers to it
    /// (objects and functions are numbered apart).
    private static func resolve(_ kind: String, _ field: Substring, _ names: inout [String: String]) -> String {
        guard field.hasPrefix("("), let close = field.firstIndex(of: ")") else { return String(field) }
        let id = kind + field[...close]
        let rest = field[field.index(after: close)...].drop { $0 == " " }
        if rest.isEmpty { return names[id] ?? id }
        names[id] = String(rest)
        return String(rest)
    }

    /// glibc's string and memory functions come in variants picked for the
    /// CPU when the library loads (`__memmove_avx_unaligned_erms`,
    /// `__strlen_evex`...): their counts differ from one machine to another.
    static func isCPUVariant(_ function: Function) -> Bool {
        guard function.object.contains("/libc.so") else { return false }
        return ["_avx", "_evex", "_sse", "_erms", "_ssse3"].contains { function.name.contains($0) }
    }
}
