import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// How much one plugin's storage folder holds, kept in a record beside its
/// values (`.usage`) so a write checks its quota in constant time instead of
/// listing the folder (10,000 keys: one `set` cost 5x one at 10 keys).
///
/// Every change runs under an exclusive `flock` on the record, so processes
/// sharing a data directory see each other's changes in order. The record
/// says `dirty` while a change is under way: a writer that died between
/// writing its value and the record leaves it dirty, and the next change
/// counts the folder again (once) rather than trust it. Files put in the
/// folder by anything but the storage service are counted only then.
struct StorageUsage: Equatable {
    var keys: Int
    var bytes: Int

    static let recordName = ".usage"

    /// Runs one change of the folder `dir` under the record's lock: `plan`
    /// gets the usage now and returns the usage after the change (nil:
    /// nothing to change), or throws to refuse it; `apply` makes the change.
    /// `count` lists the folder when the record is missing, torn or dirty.
    static func change(
        in dir: Int32, folder: String, count: () -> StorageUsage,
        plan: (StorageUsage) throws(ServiceError) -> StorageUsage?, apply: () throws(ServiceError) -> Void
    ) throws(ServiceError) {
        let fd = openat(dir, recordName, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0o600)
        let path = "\(folder)/\(recordName)"
        guard fd >= 0 else {
            if errno == ELOOP { throw .symlink(path: path) }
            throw .notWritable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .notWritable(path: path, reason: String(cString: strerror(errno))) }
        if let kind = FileKeyValueStore.notAPlainFile(info) { throw .notAFile(path: path, kind: kind) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .notWritable(path: path, reason: String(cString: strerror(errno))) }
        }
        let now = read(fd) ?? count()
        guard let after = try plan(now) else { return }
        // No change without its dirty mark: a record that cannot say one is
        // under way could later be trusted wrongly.
        guard write(after, clean: false, to: fd) else {
            throw .notWritable(path: path, reason: String(cString: strerror(errno)))
        }
        do {
            try apply()
        } catch {
            write(now, clean: true, to: fd)
            throw error
        }
        write(after, clean: true, to: fd)
    }

    /// The record's usage, or nil when it is missing, torn or dirty.
    private static func read(_ fd: Int32) -> StorageUsage? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let words = String(decoding: buffer.prefix(count), as: UTF8.self).split(whereSeparator: \.isWhitespace)
        // Bounded far below overflow: a record saying more is torn, not trusted.
        guard words.count == 4, words[0] == "v1", words[3] == "clean", let keys = Int(words[1]), let bytes = Int(words[2]),
            (0...(1 << 40)).contains(keys), (0...(1 << 60)).contains(bytes)
        else { return nil }
        return StorageUsage(keys: keys, bytes: bytes)
    }

    /// Whether the record now says `usage`.
    @discardableResult
    private static func write(_ usage: StorageUsage, clean: Bool, to fd: Int32) -> Bool {
        let line = Array("v1 \(usage.keys) \(usage.bytes) \(clean ? "clean" : "dirty")\n".utf8)
        let written = line.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return written == line.count && ftruncate(fd, off_t(line.count)) == 0
    }
}
