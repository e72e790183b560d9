import PlugboardHost
import CPlugboardHost
import CPlugboard
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard

/// The host's parsers of untrusted input, each as one function of bytes,
/// for the fuzzer (`make fuzz`, `Sources/plugboard-fuzz`) and for the replay
/// of its corpus in `make test`. Package access: these reach internals a
/// fuzzer must exercise and no host author should call.
///
/// A target returns normally for every input it rejects with an error; it
/// traps (a fuzzer finding) only when an invariant breaks.
package enum ParserFuzzing {
    package static let targets: [(name: String, run: @Sendable (UnsafeRawBufferPointer) -> Void)] = [
        ("elf", elf),
        ("descriptor", descriptor),
        ("host-settings", hostSettings),
        ("route-patterns", routePatterns),
        ("cache", cache),
        ("route-wire", routeWire),
        ("frames", frames),
    ]
    // "storage-keys" (`storageKeys(_:composed:decomposed:)`) is added by the
    // fuzzer, which brings Foundation's normalization to check the store's
    // against: the host does not load Foundation.

    /// A plugin file's bytes: the ELF reader, then every static check.
    static func elf(_ bytes: UnsafeRawBufferPointer) {
        guard let image = try? ELFImage.parse(bytes) else { return }
        _ = FileCompatibility.problem(in: image, "fuzz.so", .current)
        _ = PluginRecord.FileDetails(image)
    }

    /// A descriptor as a plugin's entry point could return it, built from
    /// the input (`DescriptorInput`): pointers are valid, their contents and
    /// every count and version are the fuzzer's.
    static func descriptor(_ bytes: UnsafeRawBufferPointer) {
        var input = DescriptorInput(bytes)
        input.withDescriptor { raw in
            guard case let .success(descriptor) = Descriptor.read(raw, path: "fuzz.so", environment: .current) else { return }
            precondition(Descriptor.isValidID(descriptor.id), "an invalid id was accepted")
            precondition(descriptor.provides.count <= Descriptor.maxInterfaces)
        }
    }

    /// A route's response or request as an isolated child sends it (its
    /// bytes are the child's, so hostile): a response that decodes
    /// encodes back to itself, and a request's captures pair up.
    static func routeWire(_ bytes: UnsafeRawBufferPointer) {
        let wire = ArraySlice(bytes)
        if let response = RouteWire.response(from: wire) {
            _ = RouteWire.problem(with: response)
            precondition(RouteWire.response(from: RouteWire.response(response)[...]) == response, "a response did not survive its round trip")
        }
        if let (match, _) = RouteWire.request(from: wire, pattern: "/fuzz/{id}") {
            precondition(match.parameterNames.count == match.parameterValues.count, "a request's captures do not pair up")
        }
    }

    /// What an isolated child sends the host: frames on its reply pipe,
    /// some of them notes of frames in its shared ring, whose bytes are the
    /// child's too. The first two bytes say how many of the rest fill the
    /// ring; the others are the pipe's. The reader must take a frame only
    /// from inside the ring, hand out no note, and trap on nothing.
    static func frames(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 2, let ring = FuzzRing.shared else { return }
        let split = min(bytes.count - 2, Int(bytes[0]) | Int(bytes[1]) << 8)
        ring.fill(UnsafeRawBufferPointer(rebasing: bytes[2..<(2 + split)]))
        let stream = UnsafeRawBufferPointer(rebasing: bytes[(2 + split)...])
        var ends: [Int32] = [-1, -1]
        // A pipe holds 64 KiB: a longer stream would wait for a reader.
        guard stream.count <= 60_000, plugboard_pipe(&ends, 0) == 0 else { return }
        if let base = stream.baseAddress { _ = write(ends[1], base, stream.count) }
        close(ends[1])
        let channel = FrameChannel(input: ends[0], output: -1, incoming: ring.reader)
        defer { channel.close() }
        while let frame = try? channel.receive(until: nil) {
            precondition(frame.kind != IsolationProtocol.Kind.shared.rawValue, "a ring note was handed out as a frame")
            precondition(frame.payload.count <= IsolationProtocol.maximumFrame)
        }
    }

    /// The host configuration file.
    static func hostSettings(_ bytes: UnsafeRawBufferPointer) {
        _ = HostSettings.parse(Data(bytes), file: "fuzz.json")
    }

    /// Lines of route patterns, then `--`, then paths to navigate to. Every
    /// match must bind each capture name of its pattern to one segment.
    static func routePatterns(_ bytes: UnsafeRawBufferPointer) {
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.split(separator: "\n--\n", maxSplits: 1, omittingEmptySubsequences: false)
        let table = RouteTable()
        let owner = ServiceOwner(pluginID: "fuzz.owner")
        for pattern in parts[0].split(separator: "\n").prefix(64) {
            try? table.register(String(pattern), owner: owner) { match in match.path }
        }
        let paths = parts.count > 1 ? parts[1].split(separator: "\n").prefix(64) : parts[0].split(separator: "\n").prefix(64)
        for path in paths {
            guard let (_, match) = table.match(String(path)) else { continue }
            precondition(match.parameterNames.count == match.parameterValues.count, "captures and names differ")
            for value in match.parameterValues { precondition(!value.contains("/"), "a capture spans segments") }
        }
    }

    /// A storage key: one file name per key (NFC), which decodes back to
    /// it; checked against another implementation's NFC and NFD forms.
    package static func storageKeys(
        _ bytes: UnsafeRawBufferPointer, composed: (String) -> String, decomposed: (String) -> String
    ) {
        let key = String(decoding: bytes, as: UTF8.self)
        let store = FileKeyValueStore(root: "/nonexistent", folder: "fuzz.plugin")
        guard let name = try? store.name(for: key) else { return }
        precondition(name.hasSuffix(FileKeyValueStore.valueSuffix) && !name.contains("/"), "a key's file name leaves its folder")
        let decoded = FileKeyValueStore.decode(String(name.dropLast(FileKeyValueStore.valueSuffix.count)))
        // Bytes, not String ==, which would call NFC and NFD equal.
        precondition(decoded.map { Array($0.utf8) } == Array(composed(key).utf8), "a key's file name is not its NFC form")
        precondition(try! store.name(for: decomposed(key)) == name, "NFC and NFD forms of a key differ")
    }

    /// The registry cache file.
    static func cache(_ bytes: UnsafeRawBufferPointer) {
        // The bytes as one entry, too: the entry reader sees them all, not only
        // what lies behind a valid header and index.
        if let entry = try? CacheEntry(bytes: bytes) { roundTrip(entry) }
        guard let stored = try? StoredEntries(file: OpenFile(bytes: Array(bytes)), head: Array(bytes)) else { return }
        // Every lookup stays in bounds; what was read can be written, and reads back the same.
        let entries = stored.allEntries
        for (path, entry) in entries {
            _ = stored.entry(for: path)
            if let entry { roundTrip(entry) }
        }
        let again = try! CacheEntries(stored: stored).encoded(host: stored.host)
        let reread = try! StoredEntries(file: OpenFile(bytes: again), head: again)
        precondition(reread.count == stored.count, "the cache format does not round-trip")
    }

    /// An entry that was read is written, and reads back the same.
    private static func roundTrip(_ entry: CacheEntry) {
        let written = try! entry.bytes()
        let reread = try! written.withUnsafeBytes { raw throws(EntryReader.Damage) in try CacheEntry(bytes: raw) }
        precondition(reread == entry, "a cache entry does not round-trip")
    }
}

/// Reads a descriptor's fields from fuzzer bytes: a flags byte (bit 0: the
/// right magic, 1: the right layout, 2: the host's ABI, 3: the host's
/// toolchain, 4: a factory, 5: an activation list, 6: a null trigger list),
/// then strings (a length
/// byte, 255 meaning a null pointer) and counts (two bytes each).
struct DescriptorInput {
    private var bytes: [UInt8]
    private var position = 0
    private var strings: [UnsafeMutablePointer<CChar>] = []

    init(_ raw: UnsafeRawBufferPointer) { bytes = Array(raw) }

    private mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func u16() -> UInt32 { UInt32(byte()) | UInt32(byte()) << 8 }
    private mutating func u32() -> UInt32 { u16() | u16() << 16 }

    private mutating func string() -> UnsafePointer<CChar>? {
        let length = Int(byte())
        if length == 255 { return nil }
        return copy((0..<length).map { _ in CChar(bitPattern: byte()) })
    }

    private mutating func copy(_ characters: [CChar]) -> UnsafePointer<CChar> {
        let text = characters + [0]
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: text.count)
        copy.initialize(from: text, count: text.count)
        strings.append(copy)
        return UnsafePointer(copy)
    }

    /// Calls `body` with the descriptor; everything it points to lives until `body` returns.
    mutating func withDescriptor(_ body: (UnsafeRawPointer) -> Void) {
        let environment = HostEnvironment.current
        let flags = byte()
        var c = plugboard_descriptor()
        c.magic = flags & 1 != 0 ? Descriptor.magic : u32()
        c.layout_version = flags & 2 != 0 ? Descriptor.layout : u32()
        c.sdk_abi_major = flags & 4 != 0 ? environment.sdkABI.major : u32()
        c.sdk_abi_minor = flags & 4 != 0 ? environment.sdkABI.minor : u32()
        c.toolchain = flags & 8 != 0 ? copy(environment.compiledToolchain.utf8CString.dropLast().map { $0 }) : string()
        c.sdk_version = string()
        c.plugin_id = string()
        c.plugin_version = string()
        c.provides_count = u16()
        c.services_count = u16()
        // Lists hold as many entries as the count says, up to the reader's
        // limit: beyond it, the reader must refuse without reading the list.
        let providesCount = min(Int(c.provides_count), Descriptor.maxInterfaces)
        let provides = UnsafeMutablePointer<plugboard_interface>.allocate(capacity: max(providesCount, 1))
        for index in 0..<providesCount {
            provides[index] = plugboard_interface(id: string(), major: u32(), minor: u32(), patch: u32(), reserved: 0)
        }
        let servicesCount = min(Int(c.services_count), Descriptor.maxInterfaces)
        let services = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(servicesCount, 1))
        for index in 0..<servicesCount { services[index] = string() }
        c.provides = byte() == 255 ? nil : UnsafePointer(provides)
        c.services = byte() == 255 ? nil : UnsafePointer(services)
        let triggerCount = u16()
        let triggers = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(min(Int(triggerCount), Descriptor.maxInterfaces), 1))
        for index in 0..<min(Int(triggerCount), Descriptor.maxInterfaces) { triggers[index] = string() }
        var activation = plugboard_activation(count: triggerCount, reserved: 0, triggers: flags & 64 != 0 ? nil : UnsafePointer(triggers))
        var factory: UInt8 = 0
        withUnsafeMutablePointer(to: &factory) { factoryPointer in
            c.factory = flags & 16 != 0 ? UnsafeMutableRawPointer(factoryPointer) : nil
            withUnsafePointer(to: &activation) { activationPointer in
                c.activation = flags & 32 != 0 ? activationPointer : nil
                withUnsafePointer(to: &c) { body(UnsafeRawPointer($0)) }
            }
        }
        provides.deallocate()
        services.deallocate()
        triggers.deallocate()
        for string in strings { string.deallocate() }
        strings.removeAll()
    }
}

/// One shared ring for the `frames` target: the child's side fills its
/// bytes, the host's side reads them as the host would.
private final class FuzzRing: Sendable {
    let reader: SharedRing
    private let fd: Int32
    static let shared = FuzzRing()

    private init?() {
        fd = plugboard_ring_create()
        guard let reader = SharedRing(fd: fd) else { return nil }
        self.reader = reader
    }

    /// The child writes `bytes` at the start of its ring.
    func fill(_ bytes: UnsafeRawBufferPointer) {
        guard let ring = plugboard_ring_map(fd) else { return }
        defer { plugboard_ring_unmap(ring) }
        if let base = bytes.baseAddress { (ring + Int(PLUGBOARD_RING_HEADER)).copyMemory(from: base, byteCount: min(bytes.count, Int(PLUGBOARD_RING_DATA))) }
    }
}
