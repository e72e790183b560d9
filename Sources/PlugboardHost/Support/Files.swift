#if canImport(Glibc)
import Glibc
#endif

/// Reads an open file to its end with read(2), retrying on EINTR. Works for
/// generated files (`/proc`) whose size stat reports as 0. nil on error,
/// with `errno` set.
func readToEnd(_ fd: Int32) -> [UInt8]? {
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
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
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
func makeDirectories(_ path: String) -> (path: String, errno: Int32)? {
    var info = stat()
    if stat(path, &info) == 0 { return nil }
    var current = ""
    for component in path.split(separator: "/") {
        current += "/" + component
        if mkdir(current, 0o700) != 0 && errno != EEXIST { return (current, errno) }
    }
    return nil
}
