#if canImport(Glibc)
import Glibc
#endif

/// Reads an open file to its end with read(2), retrying on EINTR. Works for
/// generated files (`/proc`) whose size stat reports as 0. nil on error,
/// with `errno` set.
package func readToEnd(_ fd: Int32) -> [UInt8]? {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 { if errno == EINTR { continue } else { return nil } }
        if count == 0 { return bytes }
        bytes += chunk[0..<count]
    }
}

/// Writes all of `bytes` to `fd`, retrying on EINTR and short writes.
/// False on error, with `errno` set.
package func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let count = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return false }
        offset += count
    }
    return true
}

/// Creates `path` and every missing parent (mode 0700 for new ones), like
/// `mkdir -p`. nil on success; otherwise the component that could not be
/// made and `errno`.
package func makeDirectories(_ path: String) -> (path: String, errno: Int32)? {
    var info = stat()
    if stat(path, &info) == 0 { return nil }
    var current = ""
    for component in path.split(separator: "/") {
        current += "/" + component
        if mkdir(current, 0o700) != 0 && errno != EEXIST { return (current, errno) }
    }
    return nil
}

/// Replaces `path` with `bytes` whole or not at all: a new file `temporary`
/// beside it (`O_EXCL`, `mode`), every byte, `fsync`, then renamed over
/// `path`, so readers see the old file or the new one and a crash leaves one
/// of them; with `syncingFolder`, the folder is synced too (the rename
/// itself survives a crash). What went wrong, when something did.
package func replaceFile(_ path: String, with bytes: [UInt8], temporary: String, mode: mode_t, syncingFolder: Bool = false) -> String? {
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
    guard fd >= 0 else { return "cannot create \(temporary): \(String(cString: strerror(errno)))" }
    let written = bytes.withUnsafeBytes { writeAll(fd, $0) }
    let synced = written && fsync(fd) == 0
    let reason = String(cString: strerror(errno))
    close(fd)
    guard synced else {
        unlink(temporary)
        return "cannot write \(temporary): \(reason)"
    }
    guard rename(temporary, path) == 0 else {
        let reason = String(cString: strerror(errno))
        unlink(temporary)
        return "cannot rename \(temporary) to \(path): \(reason)"
    }
    if syncingFolder {
        let folder = open(OwnershipCheck.parent(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }
    return nil
}
