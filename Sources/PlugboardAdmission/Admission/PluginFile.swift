#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// One plugin file read once, whole, into memory: the bytes every check
/// looks at, their hash, and the file's identity when they were read.
///
/// Read with `pread`, never mapped: a file truncated or rewritten while it is
/// read yields `file-changed`, not a SIGBUS in the host. The bytes are what a
/// private copy is written from, so what is checked is what is loaded.
package struct PluginFile: Sendable {
    /// The path reported in messages (as found in the plugins directory).
    let path: String
    let identity: FileIdentity
    let bytes: [UInt8]
    let hash: UInt64
    package let image: ELFImage

    /// Larger files are refused before reading: no plugin is this big.
    static let maximumSize = 1 << 30

    /// Parses bytes read by ``readBytes(_:reportedAs:)`` as ELF.
    package static func parse(
        _ read: (identity: FileIdentity, bytes: [UInt8], hash: UInt64), reportedAs path: String
    ) -> Result<PluginFile, PluginLoadError> {
        let parsed = read.bytes.withUnsafeBytes { buffer in Result { () throws(ELFImage.ReadError) in try ELFImage.parse(buffer) } }
        switch parsed {
        case let .success(image):
            return .success(PluginFile(path: path, identity: read.identity, bytes: read.bytes, hash: read.hash, image: image))
        case let .failure(error): return .failure(FileCompatibility.map(error, path))
        }
    }

    /// The bytes of `file`, the identity they were read under and their
    /// hash, without parsing them (for bytes checked before, by their hash).
    package static func readBytes(
        _ file: String, reportedAs path: String
    ) -> Result<(identity: FileIdentity, bytes: [UInt8], hash: UInt64), PluginLoadError> {
        // O_NONBLOCK: a fifo must not block the open; O_NOCTTY: a terminal must
        // not become our controlling tty. Neither matters for regular files.
        let fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return .failure(.unreadable(path: path, call: "open", errno: errno)) }
        defer { close(fd) }
        var before = stat()
        guard fstat(fd, &before) == 0 else { return .failure(.unreadable(path: path, call: "fstat", errno: errno)) }
        guard (before.st_mode & S_IFMT) == S_IFREG else { return .failure(.notAFile(path: path, kind: "special file")) }
        guard before.st_size > 0 else { return .failure(.emptyFile(path: path)) }
        guard before.st_size <= maximumSize else {
            return .failure(.malformed(path: path, detail: "\(before.st_size) bytes, more than any plugin (limit \(maximumSize))"))
        }
        let size = Int(before.st_size)
        var failure: PluginLoadError?
        // Not zeroed first: the read fills it (zeroing half a megabyte was a
        // tenth of an activation's admission).
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var done = 0
            defer { initialized = done }
            while done < size {
                let count = pread(fd, buffer.baseAddress! + done, size - done, off_t(done))
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = .unreadable(path: path, call: "pread", errno: errno)
                    return
                }
                if count == 0 {
                    failure = .fileChanged(path: path, detail: "it shrank from \(size) to \(done) bytes while being read")
                    return
                }
                done += count
            }
        }
        if let failure { return .failure(failure) }
        var after = stat()
        guard fstat(fd, &after) == 0 else { return .failure(.unreadable(path: path, call: "fstat", errno: errno)) }
        let identity = FileIdentity(before)
        guard FileIdentity(after) == identity else {
            return .failure(.fileChanged(path: path, detail: "it was written to while being read"))
        }
        return .success((identity, bytes, bytes.withUnsafeBytes(ContentHash.of)))
    }
}
