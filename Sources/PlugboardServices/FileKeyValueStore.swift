import CPlugboardHost
import FoundationEssentials
import Plugboard
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// A plugin's ``KeyValueStore``: one file per key in `<data dir>/<plugin id>/`.
///
/// - Isolation: file names are the key's UTF-8 bytes hex-encoded, so no key
///   (`/`, `..`, NUL...) can name anything outside the plugin's directory, and
///   plugin ids are validated reverse-DNS names before they name a directory.
/// - No escape: every open is relative to a descriptor of the data directory
///   and refuses symbolic links (`O_NOFOLLOW`): a plugin folder or a value file
///   that is a link is an error naming it, and nothing is read or written
///   through it.
/// - One key, one file: keys are normalised to Unicode NFC, so the same text
///   composed or decomposed is the same key.
/// - Atomicity: a value is written to a unique temporary file, `fsync`ed,
///   then `rename`d over the old one, and the directory is `fsync`ed; a crash
///   at any point leaves the old value or the new one.
/// - Quotas: ``StorageQuota`` bounds bytes, keys and value size per plugin,
///   checked against ``StorageUsage``'s record in constant time, under a lock
///   shared by every process using the data directory.
package struct FileKeyValueStore: KeyValueStore {
    /// The data directory (trusted: the host's own setting).
    let root: String
    /// The plugin's folder in it (a validated plugin id).
    let folder: String
    package var quota = StorageQuota()
    /// Told when a quota refuses a write (the host's diagnostics).
    var onQuota: (@Sendable (ServiceError) -> Void)?

    package init(
        root: String, folder: String, quota: StorageQuota = StorageQuota(), onQuota: (@Sendable (ServiceError) -> Void)? = nil
    ) {
        self.root = root
        self.folder = folder
        self.quota = quota
        self.onQuota = onQuota
    }
    package static let valueSuffix = ".value"

    package var directory: String { "\(root)/\(folder)" }

    package func value(for key: String) throws(ServiceError) -> [UInt8]? {
        let name = try self.name(for: key)
        guard let dir = try openFolder(create: false) else { return nil }
        defer { close(dir) }
        // O_NONBLOCK: a FIFO put in a value's place must not block the open.
        let fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw .symlink(path: "\(directory)/\(name)") }
            throw .unreadable(path: "\(directory)/\(name)", reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        // Only a regular file of its own: a hard link could hold any file's contents.
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw .unreadable(path: "\(directory)/\(name)", reason: String(cString: strerror(errno)))
        }
        if let kind = Self.notAPlainFile(info) { throw .notAFile(path: "\(directory)/\(name)", kind: kind) }
        guard let bytes = readToEnd(fd) else {
            throw .unreadable(path: "\(directory)/\(name)", reason: String(cString: strerror(errno)))
        }
        return bytes
    }

    package func set(_ value: [UInt8], for key: String) throws(ServiceError) {
        let name = try self.name(for: key)
        guard let dir = try openFolder(create: true) else { throw .notWritable(path: directory, reason: "no plugin folder") }
        defer { close(dir) }
        try checkValueSize(value.count, as: name)
        try StorageUsage.change(in: dir, folder: directory, count: { count(dir) }, plan: { usage throws(ServiceError) in
            try plan(usage, adding: value.count, as: name, in: dir)
        }, apply: { () throws(ServiceError) in
            try write(value, as: name, in: dir)
        })
    }

    /// Writes `value` under `name` atomically: a unique temporary file,
    /// `fsync`ed, renamed over the old one, then the folder `fsync`ed.
    private func write(_ value: [UInt8], as name: String, in dir: Int32) throws(ServiceError) {
        let temporary = ".tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = openat(dir, temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .notWritable(path: directory, reason: String(cString: strerror(errno))) }
        var failure: String?
        if !value.withUnsafeBytes({ writeAll(fd, $0) }) { failure = String(cString: strerror(errno)) }
        if failure == nil, fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        close(fd)
        // renameat replaces a link named `name` itself, never what it points to.
        if failure == nil, renameat(dir, temporary, dir, name) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlinkat(dir, temporary, 0)
            throw .notWritable(path: directory, reason: failure)
        }
        fsync(dir)
    }

    package func removeValue(for key: String) throws(ServiceError) {
        let name = try self.name(for: key)
        guard let dir = try openFolder(create: false) else { return }
        defer { close(dir) }
        try StorageUsage.change(in: dir, folder: directory, count: { count(dir) }, plan: { usage in
            guard let old = size(of: name, in: dir) else { return nil }
            return StorageUsage(keys: max(0, usage.keys - 1), bytes: max(0, usage.bytes - old))
        }, apply: { () throws(ServiceError) in
            if unlinkat(dir, name, 0) != 0 && errno != ENOENT {
                throw .notWritable(path: directory, reason: String(cString: strerror(errno)))
            }
            fsync(dir)
        })
    }

    package func keys() throws(ServiceError) -> [String] {
        guard let dir = try openFolder(create: false) else { return [] }
        defer { close(dir) }
        // `listing` keeps only value files.
        return listing(dir, sizes: false).names.compactMap { Self.decode(String($0.dropLast(Self.valueSuffix.count))) }.sorted()
    }

    // MARK: - The folder, by descriptor

    /// The plugin's folder, opened without following links; nil if it does not
    /// exist and `create` is false.
    private func openFolder(create: Bool) throws(ServiceError) -> Int32? {
        if create, let failed = makeDirectories(root) {
            throw .notWritable(path: failed.path, reason: String(cString: strerror(failed.errno)))
        }
        // O_PATH: only a place to open the folder from (a sandboxed child
        // has rights in its own folder, not in the data directory).
        let base = open(root, plugboard_open_path | O_DIRECTORY | O_CLOEXEC)
        guard base >= 0 else {
            if errno == ENOENT && !create { return nil }
            throw .notWritable(path: root, reason: String(cString: strerror(errno)))
        }
        defer { close(base) }
        if create, mkdirat(base, folder, 0o700) != 0, errno != EEXIST {
            throw .notWritable(path: directory, reason: String(cString: strerror(errno)))
        }
        let dir = openat(base, folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard dir >= 0 else {
            if errno == ENOENT && !create { return nil }
            if errno == ELOOP || errno == ENOTDIR {
                // Say what is there: a link, or something that is no folder.
                var info = stat()
                if fstatat(base, folder, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) != S_IFLNK {
                    throw .notAFile(path: directory, kind: Self.kind(info.st_mode) + " where the plugin's storage folder should be")
                }
                throw .symlink(path: directory)
            }
            throw .notWritable(path: directory, reason: String(cString: strerror(errno)))
        }
        return dir
    }

    /// What makes a value file unfit to read, if anything: not a regular
    /// file, or a regular file with other hard links.
    static func notAPlainFile(_ info: stat) -> String? {
        if (info.st_mode & S_IFMT) != S_IFREG { return kind(info.st_mode) }
        if info.st_nlink > 1 { return "a file with \(info.st_nlink) hard links (it may be another file's contents)" }
        return nil
    }

    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFDIR: "a folder"
        case S_IFLNK: "a symbolic link"
        case S_IFREG: "a file"
        default: "a special file"
        }
    }

    /// The value files in the folder `dir`, with their sizes if asked (read
    /// through a duplicate descriptor: the caller keeps and closes `dir`).
    private func listing(_ dir: Int32, sizes: Bool = true) -> (names: [String], bytes: [String: Int]) {
        let copy = dup(dir)
        guard copy >= 0, let stream = fdopendir(copy) else { return ([], [:]) }
        defer { closedir(stream) }
        var names: [String] = [], bytes: [String: Int] = [:]
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasSuffix(Self.valueSuffix) else { continue }
            names.append(name)
            var info = stat()
            if sizes, fstatat(dir, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { bytes[name] = Int(info.st_size) }
        }
        return (names, bytes)
    }

    /// What the folder holds, counted file by file (when the usage record
    /// cannot be trusted).
    private func count(_ dir: Int32) -> StorageUsage {
        let current = listing(dir)
        return StorageUsage(keys: current.names.count, bytes: current.bytes.values.reduce(0, +))
    }

    /// The size of the value file `name`, nil when there is none.
    private func size(of name: String, in dir: Int32) -> Int? {
        var info = stat()
        return fstatat(dir, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? Int(info.st_size) : nil
    }

    private func refuse(_ name: String, _ limit: String) -> ServiceError {
        let error = ServiceError.quotaExceeded(path: "\(directory)/\(name)", limit: limit)
        onQuota?(error)
        return error
    }

    private func checkValueSize(_ size: Int, as name: String) throws(ServiceError) {
        guard size <= quota.maximumValueBytes else {
            throw refuse(name, "a value is at most \(quota.maximumValueBytes) bytes, this one has \(size)")
        }
    }

    /// The usage after writing `size` bytes under `name`, or the quota's refusal.
    private func plan(_ usage: StorageUsage, adding size: Int, as name: String, in dir: Int32) throws(ServiceError) -> StorageUsage {
        let replacing = self.size(of: name, in: dir)
        if replacing == nil, usage.keys + 1 > quota.maximumKeys {
            throw refuse(name, "at most \(quota.maximumKeys) keys, and all are used")
        }
        let total = usage.bytes - (replacing ?? 0) + size
        guard total <= quota.maximumBytes else {
            throw refuse(name, "at most \(quota.maximumBytes) bytes in all, this write would make \(total)")
        }
        return StorageUsage(keys: usage.keys + (replacing == nil ? 1 : 0), bytes: total)
    }

    // MARK: - Names

    /// The file name of `key`: its NFC form's UTF-8 bytes, hex-encoded.
    package func name(for key: String) throws(ServiceError) -> String {
        // The standard library's NFC (what FoundationEssentials uses too).
        let bytes = key._nfcCodeUnits
        guard !bytes.isEmpty else { throw .invalidKey(key, reason: "keys must not be empty") }
        guard bytes.count <= FileKeyValueStore.maximumKeyLength else {
            throw .invalidKey(key, reason: "keys are limited to \(FileKeyValueStore.maximumKeyLength) UTF-8 bytes, this one has \(bytes.count)")
        }
        return "\(Hex.encode(bytes))\(Self.valueSuffix)"
    }

    /// Where `key` is stored.
    func path(for key: String) throws(ServiceError) -> String {
        "\(directory)/\(try name(for: key))"
    }

    /// The key a file name (without its suffix) stands for.
    package static func decode(_ name: String) -> String? {
        Hex.decode(name).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// The storage failures, worded once: what failed, where, and what to check.
/// (Every code is the SDK's: plugins can match them, see `KeyValueStore`.)
extension ServiceError {

    static func invalidKey(_ key: String, reason: String) -> ServiceError {
        ServiceError(.storageInvalidKey, "invalid storage key '\(key.prefix(40))\(key.count > 40 ? "…" : "")': \(reason)")
    }

    static func notWritable(path: String, reason: String) -> ServiceError {
        ServiceError(.storageNotWritable, "\(path): storage is not writable (\(reason)); check the host's data directory permissions", path: path)
    }

    static func unreadable(path: String, reason: String) -> ServiceError {
        ServiceError(.storageUnreadable, "\(path): cannot read stored value (\(reason)); check the file's permissions", path: path)
    }

    static func symlink(path: String) -> ServiceError {
        ServiceError(.storageSymlink, "\(path) is a symbolic link; storage never follows one (it could lead outside the data directory): remove the link", path: path)
    }

    static func notAFile(path: String, kind: String) -> ServiceError {
        ServiceError(.storageNotAFile, "\(path) is \(kind), not a stored value; storage reads only plain files of its own: remove it", path: path)
    }

    static func quotaExceeded(path: String, limit: String) -> ServiceError {
        ServiceError(.storageQuotaExceeded, "\(path): storage quota exceeded: \(limit); nothing was written (remove values, or ask the host for a larger quota)", path: path)
    }
}
