import CPlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// A counting semaphore a waiter can give up on at a deadline
/// (``Synchronization/Mutex`` cannot), made of bytes in a pipe: one byte
/// per free slot. Taking a slot uncontended is one read(2), giving it back
/// one write(2). An isolated plugin's calls in flight take one slot each;
/// a stop or a state save takes them all.
final class CallSlots: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    let count: Int

    private init(readEnd: Int32, writeEnd: Int32, count: Int) {
        self.readEnd = readEnd
        self.writeEnd = writeEnd
        self.count = count
        release(count)
    }

    /// `count` free slots (at most a pipe's 4,096 atomic bytes); a failure
    /// (with `errno`'s reason) when no pipe can be made (out of descriptors).
    static func make(count: Int = 1) -> Result<CallSlots, SystemFailure> {
        precondition(count >= 1 && count <= 4096, "CallSlots of \(count)")
        var ends: [Int32] = [-1, -1]
        let failure = plugboard_pipe(&ends, 1)
        guard failure == 0 else { return .failure(SystemFailure(reason: String(cString: strerror(failure)))) }
        return .success(CallSlots(readEnd: ends[0], writeEnd: ends[1], count: count))
    }

    struct SystemFailure: Error {
        let reason: String
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Takes one slot, waiting until `deadline` at most; false when it passed.
    func acquire(until deadline: ContinuousClock.Instant) -> Bool {
        acquire(1, until: deadline)
    }

    /// Takes `wanted` slots, waiting until `deadline` at most; false (none
    /// kept) when it passed. Slots taken one by one: two callers taking all
    /// at once may each hold part until one gives up at its deadline.
    func acquire(_ wanted: Int, until deadline: ContinuousClock.Instant) -> Bool {
        var taken = 0
        var bytes = [UInt8](repeating: 0, count: wanted)
        while taken < wanted {
            let got = bytes.withUnsafeMutableBytes { read(readEnd, $0.baseAddress! + taken, wanted - taken) }
            if got > 0 {
                taken += got
                continue
            }
            guard errno == EAGAIN || errno == EINTR else { break }
            let remaining = deadline - .now
            guard remaining > .zero else { break }
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, Int32(clamping: Int64((remaining / .milliseconds(1)).rounded(.up))))
        }
        if taken == wanted { return true }
        release(taken)
        return false
    }

    /// Gives back one slot.
    func release() { release(1) }

    /// Gives back `returned` slots.
    func release(_ returned: Int) {
        guard returned > 0 else { return }
        let bytes = [UInt8](repeating: 1, count: returned)
        var written = 0
        while written < returned {
            let count = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress! + written, returned - written) }
            if count > 0 { written += count } else if errno != EINTR { return }
        }
    }
}
