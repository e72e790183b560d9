import CPlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// Large frames between the host and a child go through shared memory, one
/// ring each way: the writer copies the frame in and sends the pipe a small
/// note (where and how long), the reader copies it out and moves its
/// release mark. The pipe still wakes the reader and keeps the order, so
/// for small frames nothing changes; a 1 MiB frame no longer crosses a
/// 64 KiB pipe in 16 wake-ups (the bench measured 0.07x the pipe's time).
///
/// The child is not trusted either way: the reader copies a frame out
/// before anything looks at it, and bounds its place to the ring; the
/// writer takes a release mark outside what it wrote for a broken ring and
/// writes no more to it. The memory is sealed at its size (see
/// `plugboard_ring_create`), so neither side can make the other's access fault.
package final class SharedRing: @unchecked Sendable {
    // @unchecked: a ring has one writer and one reader, each serialised by
    // the channel that owns it (its write lock, its one reading thread);
    // the writer's fields are only touched by the writer.
    private let base: UnsafeMutableRawPointer
    static let size = UInt64(PLUGBOARD_RING_DATA)
    private static let header = Int(PLUGBOARD_RING_HEADER)
    /// Shorter frames take the pipe: up to here it costs the same.
    static let threshold = 32 << 10

    /// Where the next frame may go, and the reader's mark last seen.
    private var head: UInt64 = 0
    private var released: UInt64 = 0
    private var broken = false

    /// Maps the ring `fd` (not closed); nil when it is not one.
    package init?(fd: Int32) {
        guard fd >= 0, let base = plugboard_ring_map(fd) else { return nil }
        self.base = base
    }

    deinit { plugboard_ring_unmap(base) }

    /// Copies `frame` in; its position, or nil when the ring has no room for it now.
    func place(_ frame: UnsafeRawBufferPointer) -> UInt64? {
        let length = UInt64(frame.count)
        guard !broken, length <= Self.size else { return nil }
        let mark = plugboard_ring_released(base)
        guard mark >= released, mark <= head else {
            broken = true
            return nil
        }
        released = mark
        var position = head
        let empty = position == mark
        // An empty ring starts again at its beginning (the fewest pages
        // touched); a frame never wraps.
        if empty || position % Self.size + length > Self.size {
            position = (position + Self.size - 1) / Self.size * Self.size
        }
        // Empty, all of it is free (the mark is behind the skipped end).
        guard empty || position + length - mark <= Self.size else { return nil }
        (base + Self.header + Int(position % Self.size)).copyMemory(from: frame.baseAddress!, byteCount: frame.count)
        head = position + length
        return position
    }

    /// Copies out the frame the writer placed at `position`, then releases
    /// it; nil when that is not inside the ring.
    func take(at position: UInt64, length: Int) -> [UInt8]? {
        guard length > 0, UInt64(length) <= Self.size, position % Self.size + UInt64(length) <= Self.size else { return nil }
        let start = base + Self.header + Int(position % Self.size)
        let bytes = [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(start: start, count: length))
            count = length
        }
        plugboard_ring_release(base, position &+ UInt64(length))
        return bytes
    }
}
