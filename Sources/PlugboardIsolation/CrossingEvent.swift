import Plugboard

/// An event crossing between host and child: its name, the chain of
/// events being delivered when it was published (for cycle detection on
/// the other side), and its JSON. Encoded as two length-prefixed strings
/// (the chain's names joined by NUL) and the JSON.
struct CrossingEvent {
    let name: String
    let chain: [String]
    let json: [UInt8]

    init(name: String, chain: [String], json: [UInt8]) {
        self.name = name
        self.chain = chain
        self.json = json
    }

    init?(_ bytes: ArraySlice<UInt8>) {
        var rest = bytes
        func string() -> String? {
            guard rest.count >= 4 else { return nil }
            let base = rest.startIndex
            let count = Int(rest.littleEndian(at: base, count: 4))
            guard rest.count >= 4 + count else { return nil }
            defer { rest = rest.dropFirst(4 + count) }
            return String(decoding: rest.dropFirst(4).prefix(count), as: UTF8.self)
        }
        guard let name = string(), let chain = string() else { return nil }
        self.name = name
        self.chain = chain.isEmpty ? [] : chain.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        json = Array(rest)
    }

    func encode(into bytes: inout [UInt8]) {
        for text in [name, chain.joined(separator: "\u{0}")] {
            withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian) { bytes += $0 }
            bytes += text.utf8
        }
        bytes += json
    }

    var payload: EventPayload { EventPayload(name: name, json: json) }
}
