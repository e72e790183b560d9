#if canImport(Glibc)
import Glibc
#endif

/// A small self-describing binary format for `Codable` values. Its first
/// user was the host's registry cache: a warm start decodes one entry per
/// installed plugin, and Foundation's JSON decoder spent about 30 µs on each
/// (keyed-container lookups over a parsed document). It is in the SDK so that
/// one coder serves both sides: the host (the cache, the crash journal, the
/// isolation protocol, through `@_spi(PlugboardHost)`) and an event crossing
/// from one plugin's type to another's (``EventPayload``), which costs an
/// encode and a decode per publish.
///
/// Every value is a tag byte and a payload; containers carry their byte
/// length and element count, so a keyed container is indexed in one pass and
/// keys can be read in any order. All integers are 8 bytes little-endian.
/// Decoding is bounds-checked: damage gives `DecodingError`, never a trap.
/// Not a public format: plugins never see these bytes (``EventPayload/json()``
/// is JSON), and the cache names its layout's version itself.
enum CompactCoding {
    enum Tag: UInt8 {
        case null = 0, bool, int, uint, double, string, keyed, unkeyed
    }

    /// The key of a superclass's part (`superEncoder()`), as JSON names it.
    static let superKey = "super"

    /// A key by name, for errors about keys a type's own keys do not have.
    struct NamedKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

// MARK: - Encoding

/// Encodes to the compact format.
@_spi(PlugboardHost)
public struct CompactEncoder: Sendable {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let root = CompactNode()
        try value.encode(to: CompactEncoding(node: root, codingPath: []))
        var out: [UInt8] = []
        out.reserveCapacity(128)  // most values are small: one allocation, no regrowth
        root.write(to: &out)
        return out
    }
}

/// A value being encoded; containers fill it in place. Leaf values are kept
/// as they are, in their container without a node of their own, and written
/// once, at the end, into the one output array.
private final class CompactNode {
    enum Content {
        case empty
        case bool(Bool)
        case int(Int64)
        case uint(UInt64)
        case double(Double)
        case string(String)
        case keyed([(String, Child)])
        case unkeyed([Child])
    }

    /// An element of a container: a leaf, or a node that an encoder fills.
    enum Child {
        case leaf(Content)
        case node(CompactNode)
    }

    var content: Content = .empty

    func write(to out: inout [UInt8]) { Self.write(content, to: &out) }

    static func write(_ content: Content, to out: inout [UInt8]) {
        switch content {
        case .empty:
            out.append(CompactCoding.Tag.null.rawValue)
        case let .bool(value):
            out.append(CompactCoding.Tag.bool.rawValue)
            out.append(value ? 1 : 0)
        case let .int(value):
            out.append(CompactCoding.Tag.int.rawValue)
            appendUInt64(UInt64(bitPattern: value), to: &out)
        case let .uint(value):
            out.append(CompactCoding.Tag.uint.rawValue)
            appendUInt64(value, to: &out)
        case let .double(value):
            out.append(CompactCoding.Tag.double.rawValue)
            appendUInt64(value.bitPattern, to: &out)
        case let .string(value):
            out.append(CompactCoding.Tag.string.rawValue)
            appendString(value, to: &out)
        case let .keyed(entries):
            appendContainer(.keyed, count: entries.count, to: &out) { out in
                for (key, child) in entries {
                    appendString(key, to: &out)
                    write(child, to: &out)
                }
            }
        case let .unkeyed(items):
            appendContainer(.unkeyed, count: items.count, to: &out) { out in
                for child in items { write(child, to: &out) }
            }
        }
    }

    static func write(_ child: Child, to out: inout [UInt8]) {
        switch child {
        case let .leaf(content): write(content, to: &out)
        case let .node(node): node.write(to: &out)
        }
    }

    /// A container: its tag, its length (of the count and the elements),
    /// its count, then the elements, written in place and the length filled
    /// in after them.
    static func appendContainer(_ tag: CompactCoding.Tag, count: Int, to out: inout [UInt8], elements: (inout [UInt8]) -> Void) {
        out.append(tag.rawValue)
        let lengthAt = out.count
        appendUInt32(0, to: &out)
        appendUInt32(UInt32(count), to: &out)
        elements(&out)
        let length = UInt32(out.count - lengthAt - 4)
        for offset in 0..<4 { out[lengthAt + offset] = UInt8(truncatingIfNeeded: length &>> (8 * offset)) }
    }

    // Byte by byte, least significant first: appending the bytes of a
    // value (`withUnsafeBytes`) goes through the generic sequence append.
    static func appendUInt32(_ value: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: value &>> shift)) }
    }

    static func appendUInt64(_ value: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: value &>> shift)) }
    }

    static func appendString(_ value: String, to out: inout [UInt8]) {
        var value = value
        value.withUTF8 { utf8 in
            appendUInt32(UInt32(utf8.count), to: &out)
            out.append(contentsOf: utf8)
        }
    }

    static func integer<T: FixedWidthInteger>(_ value: T) -> Content {
        T.isSigned ? .int(Int64(value)) : .uint(UInt64(value))
    }

    /// `value` as a leaf when it is a string, a number or a flag:
    /// `value.encode(to:)` would box a single-value container for each (the
    /// decoder reads leaves the same way).
    static func leaf<T: Encodable>(_ value: T) -> Content? {
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return integer(unsafeBitCast(value, to: Int.self)) }
        if T.self == Int64.self { return integer(unsafeBitCast(value, to: Int64.self)) }
        if T.self == UInt64.self { return integer(unsafeBitCast(value, to: UInt64.self)) }
        if T.self == Int32.self { return integer(unsafeBitCast(value, to: Int32.self)) }
        if T.self == UInt32.self { return integer(unsafeBitCast(value, to: UInt32.self)) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Double.self { return .double(unsafeBitCast(value, to: Double.self)) }
        return nil
    }

    /// Adds an element to this keyed container.
    func append(_ key: String, _ child: Child) {
        guard case var .keyed(entries) = content else { return }
        // Let go of the array first, so the append does not copy it (a copy
        // per field made a container quadratic).
        content = .empty
        entries.append((key, child))
        content = .keyed(entries)
    }

    /// Adds an element to this unkeyed container.
    func append(_ child: Child) {
        guard case var .unkeyed(items) = content else { return }
        content = .empty
        items.append(child)
        content = .unkeyed(items)
    }
}

private struct CompactEncoding: Encoder {
    let node: CompactNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .keyed = node.content {} else { node.content = .keyed(Self.entries()) }
        return KeyedEncodingContainer(KeyedWriter<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .unkeyed = node.content {} else { node.content = .unkeyed([]) }
        return UnkeyedWriter(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleWriter(node: node, codingPath: codingPath) }

    /// Room for a small type's fields: one allocation, not one per doubling.
    private static func entries() -> [(String, CompactNode.Child)] {
        var entries: [(String, CompactNode.Child)] = []
        entries.reserveCapacity(8)
        return entries
    }
}

private struct SingleWriter: SingleValueEncodingContainer {
    let node: CompactNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.content = .empty }
    mutating func encode(_ value: Bool) throws { node.content = .bool(value) }
    mutating func encode(_ value: String) throws { node.content = .string(value) }
    mutating func encode(_ value: Double) throws { node.content = .double(value) }
    // A float as the double its shortest decimal form reads as (0.1, not
    // 0.10000000149), as JSON carries it: an event's `Float` may be another
    // plugin's `Double`.
    mutating func encode(_ value: Float) throws { try encode(Double(value.description) ?? Double(value)) }
    mutating func encode(_ value: Int) throws { node.content = CompactNode.integer(value) }
    mutating func encode(_ value: Int8) throws { node.content = CompactNode.integer(value) }
    mutating func encode(_ value: Int16) throws { node.content = CompactNode.integer(value) }
    mutating func encode(_ value: Int32) throws { node.content = CompactNode.integer(value) }
    mutating func encode(_ value: Int64) throws { node.content = CompactNode.integer(value) }
    mutating func encode(_ value: UInt) throws { node.content = CompactNode.integer(value) }
    mutating func encode(_ value: UInt8) throws { node.content = CompactNode.integer(value) }
    mutating func encode(_ value: UInt16) throws { node.content = CompactNode.integer(value) }
    mutating func encode(_ value: UInt32) throws { node.content = CompactNode.integer(value) }
    mutating func encode(_ value: UInt64) throws { node.content = CompactNode.integer(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        if let leaf = CompactNode.leaf(value) {
            node.content = leaf
            return
        }
        try value.encode(to: CompactEncoding(node: node, codingPath: codingPath))
    }
}

private struct KeyedWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: CompactNode
    let codingPath: [any CodingKey]

    /// A node for a nested value under `key`.
    private func child(_ key: Key) -> CompactNode { child(named: key.stringValue) }

    private func child(named name: String) -> CompactNode {
        let child = CompactNode()
        node.append(name, .node(child))
        return child
    }

    private func leaf(_ key: Key, _ content: CompactNode.Content) { node.append(key.stringValue, .leaf(content)) }

    mutating func encodeNil(forKey key: Key) throws { leaf(key, .empty) }
    // Leaves directly: the protocol's defaults for these go through the
    // generic entry below, and a path is made only for a nested value.
    mutating func encode(_ value: String, forKey key: Key) throws { leaf(key, .string(value)) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { leaf(key, .bool(value)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { leaf(key, CompactNode.integer(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { leaf(key, CompactNode.integer(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { leaf(key, CompactNode.integer(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { leaf(key, .double(value)) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if let content = CompactNode.leaf(value) { return leaf(key, content) }
        try value.encode(to: CompactEncoding(node: child(key), codingPath: codingPath + [key]))
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        CompactEncoding(node: child(key), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        CompactEncoding(node: child(key), codingPath: codingPath + [key]).unkeyedContainer()
    }
    // Under the name "super", which the type's own keys need not have (a
    // `Key("super")!` trapped for every type without such a case).
    mutating func superEncoder() -> any Encoder {
        CompactEncoding(node: child(named: CompactCoding.superKey), codingPath: codingPath)
    }
    mutating func superEncoder(forKey key: Key) -> any Encoder { CompactEncoding(node: child(key), codingPath: codingPath + [key]) }
}

private struct UnkeyedWriter: UnkeyedEncodingContainer {
    let node: CompactNode
    let codingPath: [any CodingKey]
    var count: Int {
        if case let .unkeyed(items) = node.content { return items.count }
        return 0
    }

    /// A node for a nested value.
    private func child() -> CompactNode {
        let child = CompactNode()
        node.append(.node(child))
        return child
    }

    mutating func encodeNil() throws { node.append(.leaf(.empty)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        if let content = CompactNode.leaf(value) { return node.append(.leaf(content)) }
        try value.encode(to: CompactEncoding(node: child(), codingPath: codingPath))
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        CompactEncoding(node: child(), codingPath: codingPath).container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        CompactEncoding(node: child(), codingPath: codingPath).unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { CompactEncoding(node: child(), codingPath: codingPath) }
}

// MARK: - Decoding

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
