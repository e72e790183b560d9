import CPlugboardHost
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A frame reaches the child whole or not at all: an event that finds no
/// room is not written, and a frame cut short by its deadline closes the
/// output, so the child reads the end of the stream, never a torn frame
/// followed by the next one. Real pipes of a few pages, nobody reading.
@Suite struct FrameChannelTests {
    /// A pipe of `pages` pages, its write end non-blocking (as the host's request pipe is).
    func pipe(pages: Int) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        // Close-on-exec (as the host's own pipes): a process another test
        // starts meanwhile must not hold the write end open.
        #expect(plugboard_pipe(&ends, 0) == 0)
        // F_SETPIPE_SZ (Linux; the Glibc module does not export it).
        #expect(fcntl(ends[1], 1031, Int32(pages * 4096)) == Int32(pages * 4096))
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        return (ends[0], ends[1])
    }

    /// Everything in the pipe now, and whether its writer is gone (end of
    /// stream). `awaitingEnd`: once it is empty, wait (up to 20 s) for the
    /// end instead of returning: a process another test spawns holds a copy
    /// of every descriptor between its fork and its exec (close-on-exec
    /// closes them only then), so the end may come a moment late.
    func drain(_ fd: Int32, awaitingEnd: Bool = false) -> (bytes: Int, ended: Bool) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count > 0 { total += count; continue }
            if count < 0 && errno == EAGAIN && awaitingEnd {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, 20_000) > 0 { continue }
            }
            return (total, count == 0)
        }
    }

    /// A frame over `PIPE_BUF` (4 KiB; smaller writes are all or nothing
    /// anyway) that finds less room than it needs.
    @Test func aWholeFrameThatFindsNoRoomIsNotWrittenAtAll() {
        let (input, output) = pipe(pages: 4)
        defer { close(input) }
        let channel = FrameChannel(input: -1, output: output)
        var filler = [UInt8](repeating: 7, count: 12_000)
        #expect(write(output, &filler, filler.count) == 12_000)
        let outcome = channel.sendWhole(IsolationProtocol.Kind.event.rawValue, sequence: 0, until: .now + .milliseconds(50)) {
            $0 += [UInt8](repeating: 1, count: 6_000)
        }
        #expect(outcome == .timedOut)
        #expect(drain(input) == (12_000, false), "nothing of the frame, and the output still open")
        // With room again it goes, whole: its 13-byte header and payload.
        #expect(channel.sendWhole(IsolationProtocol.Kind.event.rawValue, sequence: 0, until: .now + .seconds(5)) {
            $0 += [UInt8](repeating: 1, count: 6_000)
        } == .sent)
        #expect(drain(input) == (6_013, false))
        channel.closeOutput()
    }

    @Test func aFrameCutShortByItsDeadlineClosesTheOutput() {
        let (input, output) = pipe(pages: 1)
        defer { close(input) }
        let channel = FrameChannel(input: -1, output: output)
        let outcome = channel.send(IsolationProtocol.Kind.call.rawValue, sequence: 1, until: .now + .milliseconds(50)) {
            $0 += [UInt8](repeating: 1, count: 10_000)
        }
        #expect(outcome == .timedOut)
        let drained = drain(input, awaitingEnd: true)
        #expect(drained.bytes > 0 && drained.bytes < 10_013 && drained.ended, "part of it, then the end of the stream: \(drained)")
        #expect(channel.send(IsolationProtocol.Kind.call.rawValue, sequence: 2, payload: [1]) == .closed)
    }

    /// A large frame crosses in the shared ring: the pipe carries a 21-byte
    /// note in the frame's place, so the order stays the pipe's.
    @Test func aLargeFrameCrossesInTheRingInItsPlace() throws {
        let fd = plugboard_ring_create()
        #expect(fd >= 0)
        defer { close(fd) }
        let writerRing = try #require(SharedRing(fd: fd)), readerRing = try #require(SharedRing(fd: fd))
        let (input, output) = pipe(pages: 16)
        defer { close(input) }
        let writer = FrameChannel(input: -1, output: output, outgoing: writerRing)
        let reader = FrameChannel(input: input, output: -1, incoming: readerRing)
        writer.useRings()
        let call = IsolationProtocol.Kind.call.rawValue, large = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        #expect(writer.send(call, sequence: 1, payload: [1]) == .sent)
        #expect(writer.send(call, sequence: 2, payload: large) == .sent)
        #expect(writer.send(call, sequence: 3, payload: [3]) == .sent)
        #expect(plugboard_pipe_room(output) == 16 * 4096 - (14 + 21 + 14), "two frames and a note in the pipe")
        let frames = try (0..<3).map { _ in try reader.receive(until: .now + .seconds(5)) }
        #expect(frames.map(\.sequence) == [1, 2, 3] && frames.allSatisfy { $0.kind == call })
        #expect(Array(frames[1].payload) == large && Array(frames[2].payload) == [3])
        writer.closeOutput()
    }

    /// The writer takes the pipe when the ring has no room, and for good
    /// once the reader forged its release mark (past what was written).
    @Test func aFullOrForgedRingLeavesFramesToThePipe() throws {
        let fd = plugboard_ring_create()
        #expect(fd >= 0)
        defer { close(fd) }
        let writer = try #require(SharedRing(fd: fd)), reader = try #require(SharedRing(fd: fd))
        let frame = [UInt8](repeating: 5, count: 6 << 20)
        func place() -> UInt64? { frame.withUnsafeBytes { writer.place($0) } }
        #expect(place() == 0 && place() == 6 << 20)
        #expect(place() == nil, "16 MiB hold two frames of 6")
        #expect(reader.take(at: 0, length: frame.count) == frame)
        #expect(place() == 16 << 20, "a frame never wraps: it starts at the beginning again")
        // Emptied, the ring takes a frame larger than the last one.
        #expect(reader.take(at: 6 << 20, length: frame.count) == frame && reader.take(at: 16 << 20, length: frame.count) == frame)
        let larger = [UInt8](repeating: 6, count: 12 << 20)
        #expect(larger.withUnsafeBytes { writer.place($0) } == 32 << 20)
        #expect(reader.take(at: 32 << 20, length: larger.count) == larger)
        #expect(reader.take(at: (16 << 20) - 8, length: 16) == nil, "a place past the end is refused")
        let raw = try #require(plugboard_ring_map(fd))
        defer { plugboard_ring_unmap(raw) }
        plugboard_ring_release(raw, 1 << 40)
        #expect(place() == nil)
        plugboard_ring_release(raw, 22 << 20)
        #expect(place() == nil, "a forged mark breaks the ring for good")
    }
}
