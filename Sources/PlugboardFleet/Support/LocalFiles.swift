import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// Files read from disk as untrusted input (a layout, a set installed
/// before): regular files only, never through a link nor blocking on a
/// FIFO, and never more bytes than expected.
package enum LocalFiles {
    /// A regular file opened for reading; -1 otherwise.
    package static func openRegular(_ path: String) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return -1 }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { close(fd); return -1 }
        return fd
    }

    /// The bytes of a regular file of at most `limit` bytes.
    package static func read(_ path: String, limit: Int) -> [UInt8]? {
        let fd = openRegular(path)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, Int(info.st_size) <= limit else { return nil }
        return readExactly(fd, Int(info.st_size))
    }

    /// The next `count` bytes of `fd`; nil when it ends (or fails) first.
    package static func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, count - done) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return nil }
            done += got
        }
        return bytes
    }

    /// What ``copy(from:to:atMost:)`` found.
    package enum Copy: Equatable {
        case copied(Int)
        /// The source holds more than `atMost` (what was copied stops there).
        case tooLong
        case unreadable
        /// Writing failed: errno.
        case unwritable(Int32)
    }

    /// Copies the regular file at `path` into `file`, at most `atMost` bytes.
    package static func copy(from path: String, to file: Int32, atMost: Int) -> Copy {
        let source = openRegular(path)
        guard source >= 0 else { return .unreadable }
        defer { close(source) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var copied = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return .unreadable }
            if count == 0 { return .copied(copied) }
            copied += count
            guard copied <= atMost else { return .tooLong }
            guard buffer.withUnsafeBytes({ writeAll(file, UnsafeRawBufferPointer(rebasing: $0[..<count])) }) else { return .unwritable(errno) }
        }
    }
}
