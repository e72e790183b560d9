/// The registry cache's one encoding: fields in a fixed order, each an
/// integer, a flag, a text or a list of texts, little-endian. The file's
/// host key, every entry, its quarantine and its file details are written
/// with it; the layouts are in RegistryCache.swift and CacheEntry+Bytes.swift.
///
/// ```
/// u64, u32          little-endian
/// flag              u8 0 | u8 1
/// text              u32 length, UTF-8;  text? := u32 0xFFFFFFFF (absent) | text
/// texts             u32 count, count × text
/// int?              flag, then u64 when 1 (two's complement)
/// double?           flag, then u64 (its bit pattern) when 1
/// ```
struct EntryWriter {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(512) }

    mutating func append(_ byte: UInt8) { bytes.append(byte) }

    mutating func append(flag: Bool) { bytes.append(flag ? 1 : 0) }

    mutating func append(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value &>> shift)) }
    }

    mutating func append(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value &>> shift)) }
    }

    mutating func append(optional value: Int?) {
        append(flag: value != nil)
        if let value { append(UInt64(bitPattern: Int64(value))) }
    }

    mutating func append(optional value: Double?) {
        append(flag: value != nil)
        if let value { append(value.bitPattern) }
    }

    /// A length or a count: below ``EntryReader/absent``, which means "absent".
    mutating func append(length: Int) throws(EntryReader.Damage) {
        guard length < Int(EntryReader.absent) else { throw EntryReader.Damage(description: "a field of \(length) is too long for the cache") }
        append(UInt32(length))
    }

    mutating func append(_ text: String) throws(EntryReader.Damage) {
        try append(length: text.utf8.count)
        bytes.append(contentsOf: text.utf8)
    }

    mutating func append(optional text: String?) throws(EntryReader.Damage) {
        guard let text else { return append(EntryReader.absent) }
        try append(text)
    }

    mutating func append(_ texts: [String]) throws(EntryReader.Damage) {
        try append(length: texts.count)
        for text in texts { try append(text) }
    }

    mutating func append(optional texts: [String]?) throws(EntryReader.Damage) {
        append(flag: texts != nil)
        if let texts { try append(texts) }
    }
}

/// Reads what ``EntryWriter`` wrote, each field checked to lie inside the
/// bytes: damage is an error, never a read out of bounds.
package struct EntryReader {
    package struct Damage: Error, CustomStringConvertible {
        package let description: String
    }

    /// The length that marks an absent text.
    static let absent = UInt32.max

    private let bytes: UnsafeRawBufferPointer
    private(set) var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

    /// What is left: how many fields of `size` bytes could still fit.
    func room(for size: Int) -> Int { (bytes.count - position) / size }

    private mutating func take(_ count: Int) throws(Damage) -> Int {
        guard count <= bytes.count - position else { throw Damage(description: "truncated at byte \(position)") }
        defer { position += count }
        return position
    }

    mutating func byte() throws(Damage) -> UInt8 { bytes[try take(1)] }

    mutating func flag() throws(Damage) -> Bool {
        switch try byte() {
        case 0: false
        case 1: true
        default: throw Damage(description: "a flag that is neither 0 nor 1 at byte \(position - 1)")
        }
    }

    mutating func uint64() throws(Damage) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(8), as: UInt64.self))
    }

    mutating func length() throws(Damage) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(4), as: UInt32.self))
    }

    mutating func optionalInt() throws(Damage) -> Int? {
        guard try flag() else { return nil }
        let value = Int64(bitPattern: try uint64())
        guard let int = Int(exactly: value) else { throw Damage(description: "an integer out of range at byte \(position - 8)") }
        return int
    }

    mutating func optionalDouble() throws(Damage) -> Double? {
        try flag() ? Double(bitPattern: try uint64()) : nil
    }

    private mutating func text(length: UInt32) throws(Damage) -> String {
        let start = try take(Int(length))
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + Int(length))]), as: UTF8.self)
    }

    mutating func text() throws(Damage) -> String {
        let length = try length()
        guard length != Self.absent else { throw Damage(description: "a required text is absent at byte \(position - 4)") }
        return try text(length: length)
    }

    mutating func optionalText() throws(Damage) -> String? {
        let length = try length()
        return length == Self.absent ? nil : try text(length: length)
    }

    mutating func texts() throws(Damage) -> [String] {
        let count = Int(try length())
        // Each text takes at least its 4-byte length: a count the bytes
        // cannot hold is damage, found before reserving room for it.
        guard count <= room(for: 4) else { throw Damage(description: "\(count) texts cannot fit at byte \(position - 4)") }
        var texts: [String] = []
        texts.reserveCapacity(count)
        for _ in 0..<count { texts.append(try text()) }
        return texts
    }

    mutating func optionalTexts() throws(Damage) -> [String]? {
        try flag() ? try texts() : nil
    }

    /// A text that must be one of `Value`'s raw values.
    mutating func value<Value: RawRepresentable<String>>(_ type: Value.Type, _ what: String) throws(Damage) -> Value {
        let text = try text()
        guard let value = Value(rawValue: text) else { throw Damage(description: "an unknown \(what) \"\(text)\"") }
        return value
    }
}
