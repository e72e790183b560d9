import CPlugboardHost
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One side of an isolation channel: frames written to one pipe, read from
/// another (see ``IsolationProtocol``).
package final class FrameChannel: @unchecked Sendable {
    // @unchecked: reading (`buffer`, `start`) is done by one thread at a
    // time: in the host the caller ``ReplyRouter`` lets read (or a stop
    // holding every call slot), in the child its one loop. A small frame is
    // one write(2) of at most PIPE_BUF bytes, which the kernel never
    // interleaves with another, so it needs no lock: its writer is counted
    // in `writers`. Every other write and closing take `writing` and the
    // `exclusive` bit, and wait for the counted writers to finish first, so
    // frames from several threads never interleave, nor is a closed number
    // written to (the bit stays set once the output is closed).
    package struct Frame {
        package let kind: UInt8
        package let sequence: UInt64
        package let payload: ArraySlice<UInt8>
    }

    package enum Failure: Error {
        /// The peer closed its end (or the read failed).
        case closed
        /// The deadline passed first.
        case timedOut
        /// A frame longer than allowed or shorter than its header.
        case malformed(String)
    }

    let input: Int32
    let output: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    /// What one read(2) fills (a pipe holds 64 KiB).
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
    private static let header = 4 + 1 + 8

    /// Large frames each way (``SharedRing``): the peer's are read from
    /// `incoming` whenever it sends them; this side writes to `outgoing`
    /// once ``useRings()`` says the peer reads it.
    private let incoming: SharedRing?
    private let outgoing: SharedRing?
    private let ringsInUse = Atomic<Bool>(false)

    package init(input: Int32, output: Int32, incoming: SharedRing? = nil, outgoing: SharedRing? = nil) {
        self.input = input
        self.output = output
        self.incoming = incoming
        self.outgoing = outgoing
    }

    // Unmapped only here: no thread reads or writes a channel nobody holds.
    deinit { scratch.deallocate() }

    /// Both rings are mapped on this side.
    var hasRings: Bool { incoming != nil && outgoing != nil }

    /// The peer reads this side's ring: large frames go there from now on.
    func useRings() {
        if outgoing != nil { ringsInUse.store(true, ordering: .releasing) }
    }

    private let writing = Mutex(())
    /// Lock-free writers of small frames now, and the `exclusive` bit.
    private let writers = Atomic<UInt64>(0)
    private static let exclusive: UInt64 = 1 << 62
    /// Signalled by the last lock-free writer out while the `exclusive` bit is set.
    private let writersDrained = DispatchSemaphore(value: 0)
    private let exclusiveWaits = Atomic<Bool>(false)
    /// The longest frame one write(2) to a pipe takes whole or not at all.
    private static let atomicWrite = 4_096

    /// Runs `body` with `writing` held and no lock-free writer in the middle of a write.
    private func exclusively<T>(_ body: () -> T) -> T {
        writing.withLock { _ in
            begin()
            defer { end() }
            return body()
        }
    }

    private func begin() {
        writers.bitwiseOr(Self.exclusive, ordering: .sequentiallyConsistent)
        // Each counted writer is inside one write(2) (or backing off): the
        // last one out wakes this side (`leaveAlone`). Said to be waiting
        // before looking, so a writer leaving now either sees it or is seen
        // gone; a wake-up left over from a race costs one more look.
        exclusiveWaits.store(true, ordering: .sequentiallyConsistent)
        defer { exclusiveWaits.store(false, ordering: .sequentiallyConsistent) }
        while writers.load(ordering: .sequentiallyConsistent) & ~Self.exclusive != 0 {
            writersDrained.wait()
        }
    }

    /// A lock-free writer is done: the last one out while an exclusive
    /// writer waits wakes it.
    private func leaveAlone() {
        if writers.wrappingSubtract(1, ordering: .sequentiallyConsistent).newValue == Self.exclusive,
           exclusiveWaits.load(ordering: .sequentiallyConsistent) {
            writersDrained.signal()
        }
    }

    private func end() {
        if !outputClosed { writers.bitwiseAnd(~Self.exclusive, ordering: .sequentiallyConsistent) }
    }

    /// A small frame in one write(2), without the lock; nil when it must
    /// take the lock (too long, the pipe full, or an exclusive writer or a
    /// close under way).
    private func writeAlone(_ frame: [UInt8]) -> SendOutcome? {
        guard frame.count <= Self.atomicWrite, frame.count < SharedRing.threshold else { return nil }
        let before = writers.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue
        defer { leaveAlone() }
        guard before & Self.exclusive == 0 else { return nil }
        let count = frame.withUnsafeBytes { plugboard_write_no_sigpipe(output, $0.baseAddress!, $0.count) }
        if count == frame.count { return .sent }
        if count < 0 && errno == EPIPE { return .closed }
        // EAGAIN (nothing written: no room) or EINTR: the locked path waits
        // for room. (A pipe writes at most PIPE_BUF bytes whole or not at
        // all: never short, which a socket could be.)
        return nil
    }

    /// How a send ended.
    enum SendOutcome {
        case sent
        /// The peer is gone (its end is closed: EPIPE, never SIGPIPE).
        case closed
        /// The pipe stayed full until the deadline. When part of the frame
        /// was written, the output is closed: the peer reads the end of the
        /// stream, never a torn frame followed by the next one.
        case timedOut
    }

    /// Writes one frame, waiting while the pipe is full until `deadline`
    /// (nil: for as long as it takes).
    func send(_ kind: UInt8, sequence: UInt64, payload: [UInt8], until deadline: ContinuousClock.Instant? = nil) -> SendOutcome {
        send(kind, sequence: sequence, until: deadline, capacity: payload.count) { $0 += payload }
    }

    /// Writes a frame whose payload `fill` appends (saves a copy of large
    /// arguments); `capacity`, the payload's length if known, saves growing it.
    func send(_ kind: UInt8, sequence: UInt64, until deadline: ContinuousClock.Instant? = nil, capacity: Int = 0, fill: (inout [UInt8]) -> Void) -> SendOutcome {
        let frame = Self.frame(kind, sequence: sequence, capacity: capacity, fill: fill)
        if let outcome = writeAlone(frame) { return outcome }
        return exclusively {
            guard !outputClosed else { return .closed }
            return writeFrame(frame, until: deadline)
        }
    }

    /// Writes a small frame if that takes no wait: nil when it would (the
    /// pipe full, another writer holding the channel, a frame too long for
    /// one write(2)), and then nothing of it was written.
    func sendNow(_ kind: UInt8, sequence: UInt64, capacity: Int = 0, fill: (inout [UInt8]) -> Void) -> SendOutcome? {
        writeAlone(Self.frame(kind, sequence: sequence, capacity: capacity, fill: fill))
    }

    /// Writes one frame whole or not at all, so a timeout leaves nothing of
    /// it in the pipe. A frame of at most `PIPE_BUF` bytes waits for room
    /// until `deadline`, asleep in `poll` (the kernel wakes it when a page of
    /// the pipe is free, which is room for such a frame: its write is atomic).
    /// A longer one goes only if the pipe has room for all of it after that
    /// wait (the kernel cannot wake a writer when N bytes are free), else it
    /// is not sent (`timedOut`); one larger than the pipe is written as
    /// ``send(_:sequence:until:fill:)`` does.
    func sendWhole(_ kind: UInt8, sequence: UInt64, until deadline: ContinuousClock.Instant, fill: (inout [UInt8]) -> Void) -> SendOutcome {
        let frame = Self.frame(kind, sequence: sequence, fill: fill)
        return exclusively {
            guard frame.count <= 64 << 10 else { return outputClosed ? .closed : writeFrame(frame, until: deadline) }
            var waited = false
            while true {
                guard !outputClosed else { return .closed }
                if frame.count <= Self.atomicWrite {
                    let count = frame.withUnsafeBytes { plugboard_write_no_sigpipe(output, $0.baseAddress!, $0.count) }
                    if count == frame.count { return .sent }
                    if count < 0 && errno == EPIPE { return .closed }
                    // EAGAIN: no room, nothing written (atomic); EINTR: again.
                } else {
                    let room = plugboard_pipe_room(output)
                    if room < 0 { return .closed }
                    if room >= frame.count { return writeFrame(frame, until: deadline) }
                    if waited { return .timedOut }
                }
                let remaining = deadline - .now
                guard remaining > .zero else { return .timedOut }
                var poller = pollfd(fd: output, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&poller, 1, Int32(clamping: Int64((remaining / .milliseconds(1)).rounded(.up))))
                if ready < 0 && errno != EINTR { return .closed }
                waited = ready > 0
            }
        }
    }

    /// Writes a frame only if it fits in the pipe now and no other frame is
    /// being written: never waits (but for a small frame another thread is
    /// writing: one write(2)), never leaves part of a frame. False when it
    /// was not written.
    func sendIfRoom(_ kind: UInt8, sequence: UInt64, fill: (inout [UInt8]) -> Void) -> Bool {
        let frame = Self.frame(kind, sequence: sequence, fill: fill)
        return writing.withLockIfAvailable { _ in
            begin()
            defer { end() }
            guard !outputClosed, plugboard_pipe_room(output) >= frame.count else { return false }
            // The room is counted by pages and may be less (see writeFrame).
            return writeFrame(frame, until: .now) == .sent
        } ?? false
    }

    private static func frame(_ kind: UInt8, sequence: UInt64, capacity: Int = 0, fill: (inout [UInt8]) -> Void) -> [UInt8] {
        var frame = [UInt8](repeating: 0, count: 4)
        frame.reserveCapacity(max(256, header + capacity))
        frame.append(kind)
        withUnsafeBytes(of: sequence.littleEndian) { frame += $0 }
        fill(&frame)
        let length = UInt32(truncatingIfNeeded: frame.count - 4)
        for index in 0..<4 { frame[index] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(index))) }
        return frame
    }

    /// Writes one whole frame (`writing` held); cut short by the deadline
    /// after part of it went, it closes the output, so the peer reads the end
    /// of the stream, never a torn frame followed by the next one.
    private func writeFrame(_ frame: [UInt8], until deadline: ContinuousClock.Instant?) -> SendOutcome {
        // In the ring, the pipe carries a note of where (a ring out of room
        // now takes the pipe: the order stays the pipe's).
        var bytes = frame
        if frame.count >= SharedRing.threshold, let outgoing, ringsInUse.load(ordering: .acquiring),
           let position = frame.withUnsafeBytes({ outgoing.place($0) }) {
            bytes = Self.frame(IsolationProtocol.Kind.shared.rawValue, sequence: position) { note in
                withUnsafeBytes(of: UInt64(frame.count).littleEndian) { note += $0 }
            }
        }
        let (outcome, written) = bytes.withUnsafeBytes { write($0, until: deadline) }
        if outcome == .timedOut && written > 0 {
            outputClosed = true
            Glibc.close(output)
        }
        return outcome
    }

    /// Writes all of `bytes`, waiting while a non-blocking pipe is full until
    /// `deadline`. With SIGPIPE blocked: a reader that is gone is `.closed`.
    private func write(_ bytes: UnsafeRawBufferPointer, until deadline: ContinuousClock.Instant?) -> (outcome: SendOutcome, written: Int) {
        var offset = 0
        while offset < bytes.count {
            let count = plugboard_write_no_sigpipe(output, bytes.baseAddress! + offset, bytes.count - offset)
            if count > 0 {
                offset += count
                continue
            }
            if count < 0 && errno == EINTR { continue }
            guard count < 0, errno == EAGAIN else { return (.closed, offset) }
            var timeout: Int32 = -1
            if let deadline {
                let remaining = deadline - .now
                guard remaining > .zero else { return (.timedOut, offset) }
                timeout = Int32(clamping: Int64((remaining / .milliseconds(1)).rounded(.up)))
            }
            var poller = pollfd(fd: output, events: Int16(POLLOUT), revents: 0)
            _ = poll(&poller, 1, timeout)
        }
        return (.sent, offset)
    }

    /// The next frame, waiting until `deadline` (nil: for ever).
    package func receive(until deadline: ContinuousClock.Instant?) throws(Failure) -> Frame {
        while true {
            if let frame = try bufferedFrame() { return frame }
            try fill(until: deadline)
        }
    }

    private func bufferedFrame() throws(Failure) -> Frame? {
        let available = buffer.count - start
        guard available >= 4 else { return nil }
        let length = Int(buffer.littleEndian(at: start, count: 4))
        guard length >= 9 else { throw .malformed("a frame of \(length) bytes is shorter than its header") }
        guard length <= IsolationProtocol.maximumFrame else {
            throw .malformed("a frame of \(length) bytes is over the limit of \(IsolationProtocol.maximumFrame)")
        }
        guard available >= 4 + length else { return nil }
        let frame = Frame(kind: buffer[start + 4], sequence: buffer.littleEndian(at: start + 5, count: 8), payload: buffer[(start + Self.header)..<(start + 4 + length)])
        start += 4 + length
        if start == buffer.count {
            // The frame's slice keeps the old storage alive; the next read starts a fresh one.
            buffer = []
            start = 0
        }
        return frame.kind == IsolationProtocol.Kind.shared.rawValue ? try fromRing(frame) : frame
    }

    /// The frame a ring note points to, copied out of the ring (and
    /// released there) before anything reads it.
    private func fromRing(_ note: Frame) throws(Failure) -> Frame {
        guard let incoming, note.payload.count == 8 else { throw .malformed("a shared-memory note without a ring, or of \(note.payload.count) bytes") }
        // At most 2^64 - 1: as an Int, negative lengths fail the first check.
        let length = Int(truncatingIfNeeded: note.payload.littleEndian(at: note.payload.startIndex, count: 8))
        guard length >= Self.header, length - 4 <= IsolationProtocol.maximumFrame,
              let bytes = incoming.take(at: note.sequence, length: length) else {
            throw .malformed("a shared-memory note of \(length) bytes at \(note.sequence), outside the ring")
        }
        guard Int(bytes.littleEndian(at: 0, count: 4)) == length - 4, bytes[4] != IsolationProtocol.Kind.shared.rawValue else {
            throw .malformed("a frame in the shared ring whose header does not match its note")
        }
        return Frame(kind: bytes[4], sequence: bytes.littleEndian(at: 5, count: 8), payload: bytes[Self.header...])
    }

    private func fill(until deadline: ContinuousClock.Instant?) throws(Failure) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        if let deadline {
            let remaining = deadline - .now
            guard remaining > .zero else { throw .timedOut }
            var poller = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: Int64((remaining / .milliseconds(1)).rounded(.up)))
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { return }
                throw .closed
            }
            if ready == 0 { throw .timedOut }
        }
        let count = read(input, scratch.baseAddress, scratch.count)
        if count < 0 && errno == EINTR { return }
        guard count > 0 else { throw .closed }
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
    }

    private var closed = false
    private var outputClosed = false

    /// Closes both pipes, once (a descriptor number closed twice could be
    /// another file's by then).
    package func close() {
        exclusively {
            guard !closed else { return }
            closed = true
            Glibc.close(input)
            if !outputClosed { Glibc.close(output) }
            outputClosed = true
        }
    }

    /// Closes the writing pipe only: the peer reads the end of the stream.
    func closeOutput() {
        exclusively {
            guard !outputClosed else { return }
            outputClosed = true
            Glibc.close(output)
        }
    }
}
