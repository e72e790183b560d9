@_spi(PlugboardHost) import Plugboard

/// A cache entry's bytes (format 6): fields in a fixed order, read with
/// little parsing. Every warm start reads one entry per plugin it lists;
/// through `Codable` (format 4) an entry cost about 57,000 instructions,
/// most of it the standard library's generic, boxed keyed containers.
///
/// ```
/// entry    := identity(5 × u64) hash(text?) kind(u8) body details(blob?)
/// body     := kind 0 (plugin):      scanned
///             kind 1 (rejected):    code(text) reason(text)
///             kind 2 (quarantined): quarantine(blob: compact Quarantine) plugin(u8 0 | u8 1 scanned)
/// scanned  := id version [provided] services(texts) sdkABI sdkVersion toolchain activation(texts) requires needs(texts)
/// provided := u32 count, count × (interface version)
/// requires := u8 0 | u8 1 texts ("?" when optional, the id, a space, the range)
/// text     := u32 length, UTF-8;  text? := u32 0xFFFFFFFF (absent) | text
/// texts    := u32 count, count × text;  blob? := u32 0xFFFFFFFF | u32 length, bytes
/// ```
///
/// Integers are little-endian. The file details stay in their compact
/// bytes (``CompactDeferred``), decoded only when read. Any change here
/// needs a new `RegistryCache.format` (`CacheLayoutTests` pins it).
extension CacheEntry {
    private enum Kind: UInt8 {
        case plugin = 0, rejected, quarantined
    }

    package func bytes() throws -> [UInt8] {
        var out = EntryWriter()
        for field in [identity.device, identity.inode, UInt64(bitPattern: identity.size), UInt64(bitPattern: identity.modified), UInt64(bitPattern: identity.changed)] {
            out.append(field)
        }
        try out.append(optional: hash)
        switch result {
        case let .plugin(scanned):
            out.append(Kind.plugin.rawValue)
            try out.append(scanned)
        case let .rejected(code, reason):
            out.append(Kind.rejected.rawValue)
            try out.append(code)
            try out.append(reason)
        case let .quarantined(quarantine):
            out.append(Kind.quarantined.rawValue)
            try out.append(blob: try CompactEncoder().encode(quarantine))
            out.append(flag: plugin != nil)
            if let plugin { try out.append(plugin) }
        }
        // A deferred value encodes as its bytes, as they were read.
        try out.append(blob: try deferredDetails.map { try CompactEncoder().encode($0) })
        return out.bytes
    }

    /// The entry in `bytes`, which must hold exactly one.
    package init(bytes: UnsafeRawBufferPointer) throws(EntryReader.Damage) {
        var input = EntryReader(bytes)
        let identity = try FileIdentity(
            device: input.uint64(), inode: input.uint64(), size: Int64(bitPattern: input.uint64()),
            modified: Int64(bitPattern: input.uint64()), changed: Int64(bitPattern: input.uint64()))
        let hash = try input.optionalText()
        let result: Result
        var plugin: ScannedPlugin?
        switch Kind(rawValue: try input.byte()) {
        case .plugin?:
            result = .plugin(try input.scannedPlugin())
        case .rejected?:
            result = .rejected(code: try input.text(), reason: try input.text())
        case .quarantined?:
            guard let blob = try input.blob(), let quarantine = try? CompactDecoder().decode(Quarantine.self, from: blob) else {
                throw EntryReader.Damage(description: "a quarantine that does not decode")
            }
            result = .quarantined(quarantine)
            if try input.flag() { plugin = try input.scannedPlugin() }
        case nil:
            throw EntryReader.Damage(description: "an unknown kind of entry")
        }
        var details: CompactDeferred<PluginRecord.FileDetails>?
        if let blob = try input.blob() {
            // Only its tags and lengths are walked now.
            guard let deferred = try? CompactDecoder().decode(CompactDeferred<PluginRecord.FileDetails>.self, from: blob) else {
                throw EntryReader.Damage(description: "file details that do not decode")
            }
            details = deferred
        }
        guard input.isAtEnd else { throw EntryReader.Damage(description: "bytes after the entry") }
        self.init(identity: identity, hash: hash, result: result, deferredDetails: details, plugin: plugin)
    }
}

/// Writes the fields of ``CacheEntry/bytes()``.
private struct EntryWriter {
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

    mutating func append(blob: [UInt8]?) throws(EntryReader.Damage) {
        guard let blob else { return append(EntryReader.absent) }
        try append(length: blob.count)
        bytes += blob
    }

    mutating func append(_ plugin: ScannedPlugin) throws(EntryReader.Damage) {
        try append(plugin.id)
        try append(plugin.version)
        try append(length: plugin.provides.count)
        for provided in plugin.provides {
            try append(provided.interface)
            try append(provided.version)
        }
        try append(plugin.services)
        try append(plugin.sdkABI)
        try append(plugin.sdkVersion)
        try append(plugin.toolchain)
        try append(plugin.activation)
        append(flag: plugin.requires != nil)
        if let requires = plugin.requires { try append(requires.map(ScannedPlugin.requirementText)) }
        try append(plugin.needs)
    }
}

/// Reads the fields of ``CacheEntry/bytes()``, each checked to lie inside
/// the entry: damage is an error, never a read out of bounds.
package struct EntryReader {
    package struct Damage: Error, CustomStringConvertible {
        package let description: String
    }

    /// The length that marks an absent text or blob.
    static let absent = UInt32.max

    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

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

    private mutating func length() throws(Damage) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(4), as: UInt32.self))
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
        guard count <= (bytes.count - position) / 4 else { throw Damage(description: "\(count) texts cannot fit at byte \(position - 4)") }
        var texts: [String] = []
        texts.reserveCapacity(count)
        for _ in 0..<count { texts.append(try text()) }
        return texts
    }

    mutating func blob() throws(Damage) -> UnsafeRawBufferPointer? {
        let length = try length()
        guard length != Self.absent else { return nil }
        let start = try take(Int(length))
        return UnsafeRawBufferPointer(rebasing: bytes[start..<(start + Int(length))])
    }

    mutating func scannedPlugin() throws(Damage) -> ScannedPlugin {
        let id = try text(), version = try text()
        let count = Int(try length())
        guard count <= (bytes.count - position) / 8 else { throw Damage(description: "\(count) interfaces cannot fit at byte \(position - 4)") }
        var provides: [ScannedPlugin.Provided] = []
        provides.reserveCapacity(count)
        for _ in 0..<count { provides.append(ScannedPlugin.Provided(interface: try text(), version: try text())) }
        let services = try texts()
        let sdkABI = try text(), sdkVersion = try text(), toolchain = try text()
        let activation = try texts()
        var requires: [PluginDependency]?
        if try flag() {
            requires = try texts().map { text throws(Damage) in
                guard let dependency = ScannedPlugin.requirement(text) else { throw Damage(description: "a requirement without a range") }
                return dependency
            }
        }
        let needs = try texts()
        return ScannedPlugin(
            id: id, version: version, provides: provides, services: services, sdkABI: sdkABI, sdkVersion: sdkVersion,
            toolchain: toolchain, activation: activation, requires: requires, needs: needs)
    }
}
