import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// A plugin's ``KeyValueStore``: one file per key in `<data dir>/<plugin id>/`.
///
/// - Isolation: file names are the key's UTF-8 bytes hex-encoded, so no key
///   (`/`, `..`, NUL...) can name anything outside the plugin's directory, and
///   plugin ids are validated reverse-DNS names before they name a directory.
/// - Atomicity: a value is written to a unique temporary file, `fsync`ed,
///   then `rename`d over the old one, and the directory is `fsync`ed; a crash
///   at any point leaves the old value or the new one.
struct FileKeyValueStore: KeyValueStore {
    let directory: String
    static let valueSuffix = ".value"

    func value(for key: String) throws(ServiceError) -> [UInt8]? {
        let path = try self.path(for: key)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        guard let bytes = readToEnd(fd) else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        return bytes
    }

    func set(_ value: [UInt8], for key: String) throws(ServiceError) {
        let path = try self.path(for: key)
        try ensureDirectory()
        let temporary = "\(directory)/.tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .notWritable(path: directory, reason: String(cString: strerror(errno))) }
        var failure: String?
        if !value.withUnsafeBytes({ writeAll(fd, $0) }) { failure = String(cString: strerror(errno)) }
        if failure == nil, fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporary)
            throw .notWritable(path: directory, reason: failure)
        }
        syncDirectory()
    }

    func removeValue(for key: String) throws(ServiceError) {
        let path = try self.path(for: key)
        if unlink(path) != 0 && errno != ENOENT {
            throw .notWritable(path: directory, reason: String(cString: strerror(errno)))
        }
        syncDirectory()
    }

    func keys() throws(ServiceError) -> [String] {
        guard let dir = opendir(directory) else {
            if errno == ENOENT { return [] }
            throw .unreadable(path: directory, reason: String(cString: strerror(errno)))
        }
        defer { closedir(dir) }
        var keys: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasSuffix(Self.valueSuffix), let key = Self.decode(String(name.dropLast(Self.valueSuffix.count))) else { continue }
            keys.append(key)
        }
        return keys.sorted()
    }

    // MARK: - Names

    func path(for key: String) throws(ServiceError) -> String {
        let bytes = Array(key.utf8)
        guard !bytes.isEmpty else { throw .invalidKey(key, reason: "keys must not be empty") }
        guard bytes.count <= FileKeyValueStore.maximumKeyLength else {
            throw .invalidKey(key, reason: "keys are limited to \(FileKeyValueStore.maximumKeyLength) UTF-8 bytes, this one has \(bytes.count)")
        }
        return "\(directory)/\(Self.encode(bytes))\(Self.valueSuffix)"
    }

    static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ name: String) -> String? {
        let hex = Array(name.utf8)
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let high = nibble(hex[index]), let low = nibble(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    private func ensureDirectory() throws(ServiceError) {
        if let failed = makeDirectories(directory) {
            throw .notWritable(path: failed.path, reason: String(cString: strerror(failed.errno)))
        }
    }

    private func syncDirectory() {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}

/// The storage failures, worded once: what failed, where, and what to check.
extension ServiceError {
    fileprivate static func invalidKey(_ key: String, reason: String) -> ServiceError {
        ServiceError(.storageInvalidKey, "invalid storage key '\(key.prefix(40))\(key.count > 40 ? "…" : "")': \(reason)")
    }

    fileprivate static func notWritable(path: String, reason: String) -> ServiceError {
        ServiceError(.storageNotWritable, "\(path): storage is not writable (\(reason)); check the host's data directory permissions", path: path)
    }

    fileprivate static func unreadable(path: String, reason: String) -> ServiceError {
        ServiceError(.storageUnreadable, "\(path): cannot read stored value (\(reason)); check the file's permissions", path: path)
    }
}
