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
