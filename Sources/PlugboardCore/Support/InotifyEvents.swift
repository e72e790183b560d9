#if canImport(Glibc)
import Glibc
#endif

/// One inotify instance and the events read from it: shared by the host's
/// plugins-directory watcher and `plugboard dev`'s source watcher.
package struct InotifyEvents: ~Copyable, Sendable {
    package struct Event: Sendable {
        /// The watch it came from (``add(_:mask:)`` returned it).
        package let watch: Int32
        package let mask: UInt32
        /// The file's name in the watched directory.
        package let name: String

        /// Events were lost: whoever reads must assume everything changed.
        package var overflowed: Bool { mask & UInt32(IN_Q_OVERFLOW) != 0 }
        package var isDirectory: Bool { mask & UInt32(IN_ISDIR) != 0 }
    }

    /// The instance's descriptor (non-blocking, close-on-exec).
    package let descriptor: Int32

    /// Nil when inotify is unavailable (no Linux, or the limit of instances reached).
    package init?() {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
    }

    deinit { close(descriptor) }

    /// Watches `directory` for `mask`; the watch, or nil.
    package func add(_ directory: String, mask: UInt32) -> Int32? {
        let watch = inotify_add_watch(descriptor, directory, mask)
        return watch >= 0 ? watch : nil
    }

    /// Stops watching what `watch` watched.
    package func remove(_ watch: Int32) { inotify_rm_watch(descriptor, watch) }

    /// Waits up to `milliseconds` (-1: without end) for events; [] when
    /// none came, nil when the descriptor failed.
    package func wait(milliseconds: Int32) -> [Event]? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, milliseconds)
        if ready == 0 || (ready < 0 && errno == EINTR) { return [] }
        guard ready > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return [] }
        var events: [Event] = []
        var offset = 0
        // struct inotify_event: wd, mask, cookie, len, then the name, NUL-padded.
        while offset + 16 <= count {
            let (watch, mask, length) = buffer.withUnsafeBytes { bytes in
                (bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                 bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                 Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
            }
            let name = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
            events.append(Event(watch: watch, mask: mask, name: String(decoding: name, as: UTF8.self)))
            offset += 16 + length
        }
        return events
    }
}
