import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The registry cache's entries, read in place: a start looks up the files
/// it was asked about and decodes those entries only, however many other
/// folders' entries the file holds (GStreamer's registry is read the same
/// way, with little parsing). Changes are kept beside the file's bytes and
/// merged when it is written; unchanged entries are copied as they were.
///
/// The file (little-endian; fields as in CacheFields.swift):
///
/// ```
/// "PBRC" format:u32  hostLength:u32 host(sdkABI toolchain sdkImage: texts)  count:u32 pathsLength:u32
/// count × (pathOffset:u32 pathLength:u32 entryOffset:u32 entryLength:u32), sorted by path bytes
/// path bytes…  entry bytes (each a CacheEntry's `bytes()`)…
/// ```
///
/// A start reads the header, the index and the paths (about 70 bytes per
/// entry), then each entry it needs with one `pread`.
package struct CacheEntries: Sendable {
    private var stored: StoredEntries?
    /// Entries set or removed (nil) since the file was read.
    private var changes: [String: CacheEntry?] = [:]

    init() {}

    package init(stored: StoredEntries) { self.stored = stored }

    subscript(path: String) -> CacheEntry? {
        get {
            if let change = changes[path] { return change }
            return stored?.entry(for: path)
        }
        set { changes[path] = .some(newValue) }
    }

    /// Every path with an entry (reads the whole index: for writes only).
    var paths: [String] {
        var all = Set(stored?.allPaths ?? [])
        for (path, change) in changes {
            if change == nil { all.remove(path) } else { all.insert(path) }
        }
        return all.sorted()
    }

    /// Paths of entries for files directly in `folder`, sorted by their bytes.
    func paths(in folder: String) -> [String] {
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        // Stored ones come sorted, filtered on their bytes before any string
        // is made: a warm start asks this of every folder it lists.
        let stored = stored?.paths(directlyIn: prefix) ?? []
        let changed = changes.filter { path, _ in
            path.utf8.starts(with: prefix.utf8) && !path.utf8.dropFirst(prefix.utf8.count).contains(UInt8(ascii: "/"))
        }
        guard !changed.isEmpty else { return stored }
        var found = Set(stored)
        for (path, change) in changed {
            if change == nil { found.remove(path) } else { found.insert(path) }
        }
        return found.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The file's bytes, for `host`.
    package func encoded(host: RegistryCache.HostKey) throws -> [UInt8] {
        var items: [(path: [UInt8], entry: [UInt8])] = []
        if let stored {
            for index in 0..<stored.count {
                let path = stored.pathBytes(at: index)
                // Unchanged entries are copied without decoding them.
                if changes[String(decoding: path, as: UTF8.self)] == nil, let entry = stored.entryBytes(at: index) {
                    items.append((Array(path), entry))
                }
            }
        }
        for (path, change) in changes {
            guard let entry = change else { continue }
            items.append((Array(path.utf8), try entry.bytes()))
        }
        items.sort { $0.path.lexicographicallyPrecedes($1.path) }
        var out: [UInt8] = Array(StoredEntries.magic)
        out.appendLittleEndian(UInt32(RegistryCache.format))
        var hostFields = EntryWriter()
        try hostFields.append([host.sdkABI, host.toolchain, host.sdkImage])
        let hostBytes = hostFields.bytes
        out.appendLittleEndian(UInt32(hostBytes.count))
        out += hostBytes
        out.appendLittleEndian(UInt32(items.count))
        out.appendLittleEndian(UInt32(items.reduce(0) { $0 + $1.path.count }))
        var pathOffset = out.count + items.count * 16
        var entryOffset = pathOffset + items.reduce(0) { $0 + $1.path.count }
        for item in items {
            out.appendLittleEndian(UInt32(pathOffset))
            out.appendLittleEndian(UInt32(item.path.count))
            out.appendLittleEndian(UInt32(entryOffset))
            out.appendLittleEndian(UInt32(item.entry.count))
            pathOffset += item.path.count
            entryOffset += item.entry.count
        }
        for item in items { out += item.path }
        for item in items { out += item.entry }
        return out
    }
}

/// A cache file's header, index and paths, with the index checked (every
/// offset inside the file, so lookups never read out of bounds); entries
/// are read from the file when asked for.
package struct StoredEntries: Sendable {
    static let magic: [UInt8] = Array("PBRC".utf8)

    package struct Damage: Error, CustomStringConvertible {
        package let description: String
    }

    package let host: RegistryCache.HostKey
    package let count: Int
    /// The header, the index and the paths.
    private let prefix: [UInt8]
    private let indexStart: Int
    private let file: OpenFile

    /// Whether `bytes` start like a file of this layout (any format number).
    static func isThisLayout(_ bytes: [UInt8]) -> Bool { bytes.starts(with: magic) }

    /// The format number of a file of this layout.
    static func format(of bytes: [UInt8]) -> Int? {
        bytes.count >= 8 ? Int(bytes.littleEndianUInt32(at: 4)) : nil
    }

    /// `head`: the file's first bytes, as read; the rest of the index and
    /// paths is read from `file` when longer.
    package init(file: OpenFile, head: [UInt8]) throws(Damage) {
        guard head.count >= 20, Self.isThisLayout(head) else { throw Damage(description: "not a registry cache") }
        let hostLength = Int(head.littleEndianUInt32(at: 8))
        guard 12 + hostLength + 8 <= head.count else { throw Damage(description: "the host key runs past the end") }
        do {
            host = try head.withUnsafeBytes { raw throws(EntryReader.Damage) in
                var fields = EntryReader(UnsafeRawBufferPointer(rebasing: raw[12..<(12 + hostLength)]))
                let texts = try fields.texts()
                guard texts.count == 3, fields.isAtEnd else { throw EntryReader.Damage(description: "not three texts") }
                return RegistryCache.HostKey(sdkABI: texts[0], toolchain: texts[1], sdkImage: texts[2])
            }
        } catch {
            throw Damage(description: "the host key: \(error)")
        }
        count = Int(head.littleEndianUInt32(at: 12 + hostLength))
        let pathsLength = Int(head.littleEndianUInt32(at: 16 + hostLength))
        indexStart = 20 + hostLength
        let prefixEnd = indexStart + count * 16 + pathsLength
        guard prefixEnd <= file.size else { throw Damage(description: "\(count) entries cannot fit") }
        var prefix = head.count >= prefixEnd ? Array(head[0..<prefixEnd]) : head
        if prefix.count < prefixEnd {
            guard let rest = file.read(at: prefix.count, count: prefixEnd - prefix.count) else { throw Damage(description: "cannot read the index") }
            prefix += rest
        }
        for index in 0..<count {
            let base = indexStart + index * 16
            let pathEnd = Int(prefix.littleEndianUInt32(at: base)) + Int(prefix.littleEndianUInt32(at: base + 4))
            let entryEnd = Int(prefix.littleEndianUInt32(at: base + 8)) + Int(prefix.littleEndianUInt32(at: base + 12))
            guard pathEnd <= prefixEnd, entryEnd <= file.size else { throw Damage(description: "entry \(index) runs past the end") }
        }
        self.prefix = prefix
        self.file = file
    }

    func pathBytes(at index: Int) -> ArraySlice<UInt8> {
        let base = indexStart + index * 16
        let offset = Int(prefix.littleEndianUInt32(at: base))
        return prefix[offset..<(offset + Int(prefix.littleEndianUInt32(at: base + 4)))]
    }

    /// The entry's bytes, read from the file now; nil when they cannot be.
    func entryBytes(at index: Int) -> [UInt8]? {
        let base = indexStart + index * 16
        return file.read(at: Int(prefix.littleEndianUInt32(at: base + 8)), count: Int(prefix.littleEndianUInt32(at: base + 12)))
    }

    /// How the path at `index` orders against `key`: memcmp on the bytes, the shorter first on a tie.
    private func compare(_ index: Int, _ key: [UInt8]) -> Int {
        let base = indexStart + index * 16
        let offset = Int(prefix.littleEndianUInt32(at: base)), length = Int(prefix.littleEndianUInt32(at: base + 4))
        let shared = min(length, key.count)
        let order = shared == 0 ? 0 : prefix.withUnsafeBufferPointer { path in
            key.withUnsafeBufferPointer { key in memcmp(path.baseAddress! + offset, key.baseAddress!, shared) }
        }
        return order != 0 ? Int(order) : length - key.count
    }

    /// The first index whose path is not below `key` (binary search on bytes).
    private func lowerBound(_ key: [UInt8]) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if compare(middle, key) < 0 { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The entry for `path`, decoded now; nil when there is none or it does not decode.
    package func entry(for path: String) -> CacheEntry? {
        let key = Array(path.utf8)
        let index = lowerBound(key)
        guard index < count, compare(index, key) == 0 else { return nil }
        return entry(at: index)
    }

    /// The entry at `index`, decoded now; nil when it cannot be read or does not decode.
    private func entry(at index: Int) -> CacheEntry? {
        guard let bytes = entryBytes(at: index) else { return nil }
        return try? bytes.withUnsafeBytes { raw throws(EntryReader.Damage) in try CacheEntry(bytes: raw) }
    }

    /// The paths that start with `prefix` (a folder and its `/`) and have
    /// no further `/` after it.
    func paths(directlyIn prefix: String) -> [String] {
        let key = Array(prefix.utf8)
        var index = lowerBound(key), found: [String] = []
        while index < count, pathBytes(at: index).starts(with: key) {
            let path = pathBytes(at: index)
            if !path.dropFirst(key.count).contains(UInt8(ascii: "/")) {
                found.append(String(decoding: path, as: UTF8.self))
            }
            index += 1
        }
        return found
    }

    var allPaths: [String] { (0..<count).map { String(decoding: pathBytes(at: $0), as: UTF8.self) } }

    /// Every entry decoded (the fuzz target's round trip).
    package var allEntries: [(String, CacheEntry?)] {
        (0..<count).map { index in
            (String(decoding: pathBytes(at: index), as: UTF8.self), entry(at: index))
        }
    }
}

/// A file kept open for reads at offsets (`pread`), closed with its last user.
///
/// Reads go through a window of the file kept in memory: a start reads its
/// folder's entries one by one, and they lie side by side (sorted by path),
/// so one `pread` serves many (it was one system call per installed plugin).
package final class OpenFile: Sendable {
    private let descriptor: Int32
    /// Bytes, when opened.
    let size: Int
    /// Bytes given instead of a file (the fuzz target's input).
    private let memory: [UInt8]?
    /// The bytes last read ahead, and where they start in the file.
    private let window = Mutex<(start: Int, bytes: [UInt8])>((0, []))
    /// How much is read at once when a read is not in the window.
    static let readAhead = 64 * 1024

    /// Takes `descriptor` (closed on deinit).
    init(descriptor: Int32) {
        self.descriptor = descriptor
        var info = stat()
        size = fstat(descriptor, &info) == 0 ? Int(info.st_size) : 0
        memory = nil
    }

    package init(bytes: [UInt8]) {
        descriptor = -1
        size = bytes.count
        memory = bytes
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// `count` bytes at `offset`; nil when the file is shorter or cannot be read.
    func read(at offset: Int, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset + count <= size else { return nil }
        if let memory { return Array(memory[offset..<(offset + count)]) }
        return window.withLock { window -> [UInt8]? in
            let inWindow = offset >= window.start && offset + count <= window.start + window.bytes.count
            if !inWindow {
                // The read-ahead may fail where the exact read would not
                // (a file cut short since it was opened): then the exact read.
                guard let read = readFromFile(at: offset, count: min(size - offset, max(count, Self.readAhead)))
                    ?? readFromFile(at: offset, count: count) else { return nil }
                window = (offset, read)
            }
            let from = offset - window.start
            return Array(window.bytes[from..<(from + count)])
        }
    }

    private func readFromFile(at offset: Int, count: Int) -> [UInt8]? {
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            defer { initialized = done }
            while done < count {
                let got = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else {
                    failed = true
                    return
                }
                done += got
            }
        }
        return failed ? nil : bytes
    }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian(_ value: UInt32) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    func littleEndianUInt32(at offset: Int) -> UInt32 {
        withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    }
}
