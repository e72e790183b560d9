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
