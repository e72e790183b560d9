#if canImport(Glibc)
import Glibc
#endif

/// Decodes the compact format.
@_spi(PlugboardHost)
public struct CompactDecoder: Sendable {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try bytes.withUnsafeBytes { try decode(type, from: $0) }
    }

    public func decode<T: Decodable>(_ type: T.Type, from bytes: ArraySlice<UInt8>) throws -> T {
        try bytes.withUnsafeBytes { try decode(type, from: $0) }
    }

    public func decode<T: Decodable>(_ type: T.Type, from buffer: UnsafeRawBufferPointer) throws -> T {
        do {
            let input = CompactInput(bytes: buffer)
            var position = 0
            let value = try input.value(at: &position, codingPath: [])
            guard position == buffer.count else { throw input.corrupt("\(buffer.count - position) bytes after the value", []) }
            return try T(from: CompactDecoding(input: input, value: value, codingPath: []))
        }
    }
}

/// The bytes being decoded; only valid during ``CompactDecoder/decode(_:from:)``.
private struct CompactInput {
    let bytes: UnsafeRawBufferPointer

    /// Where one value is: its tag and payload range.
    struct Value {
        let tag: CompactCoding.Tag
        let start: Int
        let end: Int
    }

    func corrupt(_ what: String, _ path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(.init(codingPath: path, debugDescription: "damaged compact encoding: \(what)"))
    }

    // Paths are autoclosures: a leaf value's path is built only for an error.
    func uint32(at position: Int, _ path: @autoclosure () -> [any CodingKey]) throws -> Int {
        guard position >= 0, position + 4 <= bytes.count else { throw corrupt("truncated", path()) }
        return Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self)))
    }

    func uint64(at position: Int, _ path: @autoclosure () -> [any CodingKey]) throws -> UInt64 {
        guard position >= 0, position + 8 <= bytes.count else { throw corrupt("truncated", path()) }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    /// The value at `position`; moves `position` past it.
    func value(at position: inout Int, codingPath: @autoclosure () -> [any CodingKey]) throws -> Value {
        guard position < bytes.count, let tag = CompactCoding.Tag(rawValue: bytes[position]) else {
            throw corrupt("bad tag at \(position)", codingPath())
        }
        let start = position + 1
        let length: Int
        switch tag {
        case .null: length = 0
        case .bool: length = 1
        case .int, .uint, .double: length = 8
        case .string: length = 4 + (try uint32(at: start, codingPath()))
        case .keyed, .unkeyed: length = 4 + (try uint32(at: start, codingPath()))
        }
        let end = start + length
        guard end <= bytes.count else { throw corrupt("truncated value at \(position)", codingPath()) }
        position = end
        return Value(tag: tag, start: start, end: end)
    }

    func string(_ start: Int, _ path: @autoclosure () -> [any CodingKey]) throws -> (String, Int) {
        let length = try uint32(at: start, path())
        let from = start + 4
        guard from + length <= bytes.count else { throw corrupt("truncated string", path()) }
        return (String(decoding: UnsafeRawBufferPointer(rebasing: bytes[from..<(from + length)]), as: UTF8.self), from + length)
    }

    /// One element of a container: where its key's bytes are (empty for
    /// unkeyed containers) and its value. Keys stay bytes until compared.
    struct Element {
        let key: Range<Int>
        let value: Value
    }

    /// Walks the elements of a container value, each checked to lie inside
    /// it, and hands each to `body`; throws at the first damage.
    func forEachElement(of value: Value, _ path: @autoclosure () -> [any CodingKey], _ body: (Element) throws -> Void) throws {
        let count = try uint32(at: value.start + 4, path())
        var position = value.start + 8
        for _ in 0..<count {
            var key = position..<position
            if value.tag == .keyed {
                let length = try uint32(at: position, path())
                key = (position + 4)..<(position + 4 + length)
                guard key.upperBound <= value.end else { throw corrupt("key past its container", path()) }
                position = key.upperBound
            }
            let element = try self.value(at: &position, codingPath: path())
            guard position <= value.end else { throw corrupt("element past its container", path()) }
            try body(Element(key: key, value: element))
        }
        guard position == value.end else { throw corrupt("container length", path()) }
    }

    /// The elements of a container value.
    func elements(of value: Value, _ path: @autoclosure () -> [any CodingKey]) throws -> [Element] {
        var elements: [Element] = []
        elements.reserveCapacity(min(try uint32(at: value.start + 4, path()), 1 << 16))
        try forEachElement(of: value, path()) { elements.append($0) }
        return elements
    }

    func keyString(_ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// Whether the key bytes at `range` spell `name`.
    func key(_ range: Range<Int>, equals name: UnsafeBufferPointer<UInt8>) -> Bool {
        name.count == range.count && (name.isEmpty || memcmp(name.baseAddress!, bytes.baseAddress! + range.lowerBound, range.count) == 0)
    }
}

private struct CompactDecoding: Decoder {
    let input: CompactInput
    let value: CompactInput.Value
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard value.tag == .keyed else { throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: codingPath, debugDescription: "not a keyed container")) }
        return KeyedDecodingContainer(try KeyedReader<Key>(input: input, value: value, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard value.tag == .unkeyed else { throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "not an unkeyed container")) }
        return UnkeyedReader(input: input, elements: try input.elements(of: value, codingPath).map(\.value), codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleReader(input: input, value: value, codingPath: codingPath) }
}

private struct SingleReader: SingleValueDecodingContainer {
    let input: CompactInput
    let value: CompactInput.Value
    /// The container's path and the value's key in it, kept apart: most of
    /// an entry is leaf values, whose path array is built only for an error.
    let parentPath: [any CodingKey]
    let key: (any CodingKey)?
    var codingPath: [any CodingKey] { key.map { parentPath + [$0] } ?? parentPath }

    init(input: CompactInput, value: CompactInput.Value, codingPath: [any CodingKey]) {
        self.init(input: input, value: value, parentPath: codingPath, key: nil)
    }

    init(input: CompactInput, value: CompactInput.Value, parentPath: [any CodingKey], key: (any CodingKey)?) {
        self.input = input
        self.value = value
        self.parentPath = parentPath
        self.key = key
    }

    private func mismatch<T>(_ type: T.Type) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "found \(value.tag)"))
    }

    func decodeNil() -> Bool { value.tag == .null }
    func decode(_ type: Bool.Type) throws -> Bool {
        guard value.tag == .bool else { throw mismatch(type) }
        return input.bytes[value.start] != 0
    }
    func decode(_ type: String.Type) throws -> String {
        guard value.tag == .string else { throw mismatch(type) }
        return try input.string(value.start, codingPath).0
    }
    // Numbers are interchangeable where the value survives, as in JSON: an
    // event crosses between plugins' types by this coder, and one plugin's
    // `Int` may be another's `Double`. (The cache and the isolation protocol
    // read the types they wrote, so nothing converts there.)
    func decode(_ type: Double.Type) throws -> Double {
        switch value.tag {
        case .double: return Double(bitPattern: try input.uint64(at: value.start, codingPath))
        case .int: return Double(Int64(bitPattern: try input.uint64(at: value.start, codingPath)))
        case .uint: return Double(try input.uint64(at: value.start, codingPath))
        default: throw mismatch(type)
        }
    }
    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let bits = try input.uint64(at: value.start, codingPath)
        let converted: T?, found: String
        switch value.tag {
        case .int: (converted, found) = (T(exactly: Int64(bitPattern: bits)), "\(Int64(bitPattern: bits))")
        case .uint: (converted, found) = (T(exactly: bits), "\(bits)")
        case .double: (converted, found) = (T(exactly: Double(bitPattern: bits)), "\(Double(bitPattern: bits))")
        default: throw mismatch(type)
        }
        guard let converted else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "the number \(found) does not fit \(T.self)"))
        }
        return converted
    }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // Leaf values decoded here directly: going through `T(from:)` would
        // box a container for each string and number of every cache entry.
        if T.self == String.self { return unsafeBitCast(try decode(String.self), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try decode(Int64.self), to: T.self) }
        if T.self == UInt64.self { return unsafeBitCast(try decode(UInt64.self), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try decode(Int.self), to: T.self) }
        if T.self == Int32.self { return unsafeBitCast(try decode(Int32.self), to: T.self) }
        if T.self == UInt32.self { return unsafeBitCast(try decode(UInt32.self), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try decode(Bool.self), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try decode(Double.self), to: T.self) }
        if T.self == [String].self { return unsafeBitCast(try strings(), to: T.self) }
        return try T(from: CompactDecoding(input: input, value: value, codingPath: codingPath))
    }

    /// An array of strings, without a container per element.
    private func strings() throws -> [String] {
        guard value.tag == .unkeyed else { throw mismatch([String].self) }
        return try input.elements(of: value, codingPath).map { element in
            guard element.value.tag == .string else { throw mismatch(String.self) }
            return try input.string(element.value.start, codingPath).0
        }
    }
}

private struct KeyedReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let input: CompactInput
    let codingPath: [any CodingKey]
    let entries: [CompactInput.Element]
    /// Where the next key is looked for first: types decode their keys in
    /// the order they encoded them, so a lookup is mostly one comparison.
    private let cursor = Cursor()

    private final class Cursor {
        var next = 0
    }

    init(input: CompactInput, value: CompactInput.Value, codingPath: [any CodingKey]) throws {
        self.input = input
        self.codingPath = codingPath
        entries = try input.elements(of: value, codingPath)
    }

    var allKeys: [Key] { entries.compactMap { Key(stringValue: input.keyString($0.key)) } }
    func contains(_ key: Key) -> Bool { find(key) != nil }

    private func find(_ key: Key) -> CompactInput.Value? { find(named: key.stringValue) }

    private func find(named name: String) -> CompactInput.Value? {
        var name = name
        return name.withUTF8 { name in
            // The key after the last one found, then that one again (the
            // standard library's `decodeIfPresent` asks `contains` first),
            // then the first match from the start. The encoder writes each
            // key of a container once.
            let next = cursor.next
            if entries.indices.contains(next), input.key(entries[next].key, equals: name) {
                cursor.next = next + 1
                return entries[next].value
            }
            if entries.indices.contains(next - 1), input.key(entries[next - 1].key, equals: name) { return entries[next - 1].value }
            for index in entries.indices where input.key(entries[index].key, equals: name) {
                cursor.next = index + 1
                return entries[index].value
            }
            return nil
        }
    }

    private func require(_ key: Key) throws -> CompactInput.Value {
        guard let value = find(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no \(key.stringValue)"))
        }
        return value
    }

    // Strings and flags directly: the generic path below checks the type first.
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try SingleReader(input: input, value: try require(key), parentPath: codingPath, key: key).decode(type)
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try SingleReader(input: input, value: try require(key), parentPath: codingPath, key: key).decode(type)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let value = find(key), value.tag != .null else { return nil }
        return try SingleReader(input: input, value: value, parentPath: codingPath, key: key).decode(type)
    }
    func decodeNil(forKey key: Key) throws -> Bool { try require(key).tag == .null }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try SingleReader(input: input, value: try require(key), parentPath: codingPath, key: key).decode(type)
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = find(key), value.tag != .null else { return nil }
        return try SingleReader(input: input, value: value, parentPath: codingPath, key: key).decode(type)
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try CompactDecoding(input: input, value: try require(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try CompactDecoding(input: input, value: try require(key), codingPath: codingPath + [key]).unkeyedContainer()
    }
    func superDecoder() throws -> any Decoder {
        guard let value = find(named: CompactCoding.superKey) else {
            throw DecodingError.keyNotFound(CompactCoding.NamedKey(stringValue: CompactCoding.superKey), .init(codingPath: codingPath, debugDescription: "no super"))
        }
        return CompactDecoding(input: input, value: value, codingPath: codingPath)
    }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        CompactDecoding(input: input, value: try require(key), codingPath: codingPath + [key])
    }
}

private struct UnkeyedReader: UnkeyedDecodingContainer {
    let input: CompactInput
    let elements: [CompactInput.Value]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> CompactInput.Value {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "no element \(currentIndex)"))
        }
        defer { currentIndex += 1 }
        return elements[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex].tag == .null else { return false }
        currentIndex += 1
        return true
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try SingleReader(input: input, value: try next(), codingPath: codingPath).decode(type)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try CompactDecoding(input: input, value: try next(), codingPath: codingPath).container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try CompactDecoding(input: input, value: try next(), codingPath: codingPath).unkeyedContainer()
    }
    mutating func superDecoder() throws -> any Decoder {
        CompactDecoding(input: input, value: try next(), codingPath: codingPath)
    }
}
