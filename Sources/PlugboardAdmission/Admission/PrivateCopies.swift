import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import PlugboardCore

/// Where the host writes the bytes it checked before loading them: one file
/// per load, under a directory of its own, with a name never used before.
///
/// Why copies: `dlopen` of the installed path could load a file swapped in
/// after the checks; `cp` over an installed file rewrites a mapped image
/// under running code; and the dynamic loader caches images by name and
/// inode, so a name or a `/proc/self/fd/N` reused would return an old image.
/// A private copy written from the very bytes that were checked answers all
/// three. Images stay mapped for the life of the process (Swift images
/// cannot be unloaded); the copies of the default per-process directory are
/// unlinked at shutdown, which leaves the mappings intact.
package struct PrivateCopies: Sendable {
    /// This host's own folder, made new (under the configured images
    /// directory, or `$XDG_RUNTIME_DIR` or the temp directory), removed at
    /// shutdown: nothing an earlier process left is ever where a plugin
    /// looks for its libraries.
    package let directory: String
    /// Whether the directory must pass the directory checks (``DirectoryTrust``):
    /// whoever can write it could swap a copy between its write and its load.
    let checksOwnership: Bool
    /// Makes the folder and holds its lock; removes what dead hosts left beside it.
    private let lock = ImagesFolderLock()
    private static let counter = Atomic<Int>(0)

    package init(directory: String? = nil, checksOwnership: Bool = true) {
        self.checksOwnership = checksOwnership
        let temporary = FileManager.default.temporaryDirectory.path
        let base = directory ?? ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { Self.isOwnPrivateFolder($0) ? $0 : nil }
            ?? Self.userFolder(in: temporary) ?? temporary
        // Normalised: /proc/self/maps names files by their exact path.
        self.directory = PluginDirectory.absolutePath(
            "\(base)/\(ImagesFolderLock.prefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    }

    /// `configured` when it can hold private copies (it can be made, and
    /// nobody else can write it or a folder above it); otherwise nil, with one
    /// warning that names it and the fix (the default is used instead).
    package static func usableBase(_ configured: String?, checksOwnership: Bool, report: (HostDiagnostic) -> Void) -> String? {
        guard let configured else { return nil }
        let path = PluginDirectory.absolutePath(configured)
        guard checksOwnership, let reason = OwnershipCheck.problem(makingFolder: path) else { return path }
        report(HostDiagnostic(.warning, code: "images-directory-untrusted",
            message: "\(path): not used for private copies: \(reason); whoever can write it could swap a copy between "
                + "its check and its load. The default (a private folder in $XDG_RUNTIME_DIR or the temp directory) is used; "
                + "fix the folder as the reason says, or set another (PluginHost.Configuration.paths.images)",
            file: path))
        return nil
    }

    /// `<temp>/plugboard-<euid>-images`, made if missing: this user's own
    /// folder (not a symbolic link, mode 0700) for the images folders, so a
    /// host's sweep of what dead hosts left (``ImagesFolderLock``) reads a
    /// folder of a few entries, not the shared temp directory. nil when
    /// another user holds the name, or it cannot be made: then the temp
    /// directory itself.
    static func userFolder(in temporary: String) -> String? {
        let path = "\(temporary)/plugboard-\(geteuid())-images"
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { return nil }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            return nil
        }
        return path
    }

    /// Whether `path` is a folder of this user that no one else may enter, as
    /// the XDG spec requires of `XDG_RUNTIME_DIR` (`su` without `-` keeps
    /// another user's).
    private static func isOwnPrivateFolder(_ path: String) -> Bool {
        var info = stat()
        return path.hasPrefix("/") && stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
            && info.st_uid == geteuid() && info.st_mode & 0o077 == 0
    }

    /// Writes `bytes` to a new file named after `label`; returns its path.
    package func write(_ bytes: [UInt8], label: String) throws(CopyError) -> String {
        try prepare()
        let number = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        let safe = String(label.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
        let target = "\(directory)/\(number)-\(UInt32.random(in: 0...UInt32.max))-\(safe)"
        // A name never used before: one already there is not ours to load.
        guard try create(target, with: bytes) else { throw CopyError(reason: "\(target) already exists") }
        return target
    }

    /// Creates the directory if needed and checks who can write it (also
    /// before a sandboxed scanner starts: its rules name the directory).
    package func prepare() throws(CopyError) {
        if let failed = lock.makeOnce(directory) { throw CopyError(reason: failed) }
        var ownership = OwnershipCheck()
        if checksOwnership, let problem = ownership.problem(folder: directory) {
            throw CopyError(reason: "the images directory is not safe: \(problem)")
        }
    }

    /// Writes `bytes` to the new file `target`; false if it already exists.
    /// O_EXCL and O_NOFOLLOW: never reuse or follow anything already there.
    private func create<Bytes: ContiguousBytes>(_ target: String, with bytes: Bytes) throws(CopyError) -> Bool {
        let fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o500)
        if fd < 0 && errno == EEXIST { return false }
        guard fd >= 0 else { throw CopyError(reason: "cannot create \(target): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard bytes.withUnsafeBytes({ writeAll(fd, $0) }) else {
            let reason = String(cString: strerror(errno))
            unlink(target)
            throw CopyError(reason: "cannot write \(target): \(reason)")
        }
        return true
    }

    /// Writes an interface library's checked bytes into the directory under
    /// its own name, so a plugin loaded from a copy here finds it through
    /// `$ORIGIN` (SwiftPM links plugins with that run path). The folder is
    /// this host's own; a file of that name is there only when two `lib/`
    /// folders (of files given by path) hold libraries of one name: the same
    /// bytes are kept, other admitted bytes replace them.
    func install(_ bytes: [UInt8], as name: String) throws(CopyError) -> String {
        try prepare()
        let target = directory + "/" + name
        if try create(target, with: bytes) { return target }
        let fd = open(target, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        let present = fd < 0 ? nil : readToEnd(fd)
        if fd >= 0 { close(fd) }
        if present == bytes { return target }
        unlink(target)
        guard try create(target, with: bytes) else { throw CopyError(reason: "\(target) was created again by someone else") }
        return target
    }

    package struct CopyError: Error, Sendable, CustomStringConvertible {
        let reason: String
        package var description: String { reason }
    }

    /// Removes this host's copies. Safe while their images are mapped:
    /// unlinking a file never unmaps it.
    package func remove() {
        try? FileManager.default.removeItem(atPath: directory)
        lock.release()
    }

    /// Bytes of address space mapped from `path` (what loading it added).
    package static func mappedBytes(of path: String) -> Int {
        guard let maps = procSelfMaps() else { return 0 }
        // On the bytes: every reload reads the whole map, which grows by a
        // few lines per generation kept (a split into characters was most
        // of a late reload's load).
        let name = Array(path.utf8)
        var total = 0
        var lineStart = 0
        while lineStart < maps.count {
            let lineEnd = maps[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? maps.count
            let line = maps[lineStart..<lineEnd]
            if line.count > name.count, line.suffix(name.count).elementsEqual(name), let range = addressRange(line) {
                total += range.upperBound - range.lowerBound
            }
            lineStart = lineEnd + 1
        }
        return total
    }

    /// The `start-end` addresses a line of `/proc/self/maps` begins with.
    private static func addressRange(_ line: ArraySlice<UInt8>) -> Range<Int>? {
        var start = 0, end = 0, inEnd = false, digits = 0
        for byte in line {
            let value: Int
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = Int(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "-") where !inEnd && digits > 0:
                inEnd = true
                digits = 0
                continue
            case UInt8(ascii: " ") where inEnd && digits > 0:
                return start <= end ? start..<end : nil
            default:
                return nil
            }
            digits += 1
            guard digits <= 16 else { return nil }
            if inEnd { end = end << 4 | value } else { start = start << 4 | value }
        }
        return nil
    }

    /// `/proc/self/maps` (Foundation's file reading trusts stat's size, 0 here).
    static func procSelfMaps() -> [UInt8]? {
        let fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return readToEnd(fd)
    }
}
