import CPlugboardHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A counting semaphore a waiter can give up on at a deadline
/// (``Synchronization/Mutex`` cannot). The free slots are an atomic count:
/// taking and giving back a slot uncontended costs no system call. A
/// waiter sleeps in `poll(2)` on a pipe, and a release writes a byte to
/// it only while someone sleeps. An isolated plugin's calls in flight take
/// one slot each; a stop or a state save takes them all.
package final class CallSlots: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    let count: Int
    private let free: Atomic<Int>
    /// Waiters about to sleep or asleep: a release wakes them.
    private let sleepers = Atomic<Int>(0)

    private init(readEnd: Int32, writeEnd: Int32, count: Int) {
        self.readEnd = readEnd
        self.writeEnd = writeEnd
        self.count = count
        free = Atomic(count)
    }

    /// `count` free slots; a failure (with `errno`'s reason) when no pipe
    /// can be made (out of descriptors).
    /// The most slots one plugin has (a pool's calls in flight together).
    package static let maximum = 4_096

    package static func make(count: Int = 1) -> Result<CallSlots, SystemFailure> {
        precondition(count >= 1 && count <= maximum, "CallSlots of \(count)")
        var ends: [Int32] = [-1, -1]
        let failure = plugboard_pipe(&ends, 1)
        guard failure == 0 else { return .failure(SystemFailure(reason: String(cString: strerror(failure)))) }
        return .success(CallSlots(readEnd: ends[0], writeEnd: ends[1], count: count))
    }

    package struct SystemFailure: Error {
        package let reason: String
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
    /// kept) when it passed. Slots are taken as they come free: two callers
    /// taking all at once may each hold part until one gives up at its deadline.
    func acquire(_ wanted: Int, until deadline: ContinuousClock.Instant) -> Bool {
        var taken = 0
        while true {
            taken += take(wanted - taken)
            if taken == wanted { return true }
            // Announced before looking again: a release after the look sees
            // the sleeper and wakes it (both sequentially consistent).
            sleepers.add(1, ordering: .sequentiallyConsistent)
            defer { sleepers.subtract(1, ordering: .sequentiallyConsistent) }
            if free.load(ordering: .sequentiallyConsistent) > 0 { continue }
            let remaining = deadline - .now
            guard remaining > .zero else { break }
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, Int32(clamping: Int64((remaining / .milliseconds(1)).rounded(.up))))
            // The wake-up's byte (another waiter may have had it: then none).
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
        }
        release(taken)
        return false
    }

    /// Takes up to `wanted` free slots now; how many it took.
    private func take(_ wanted: Int) -> Int {
        var current = free.load(ordering: .relaxed)
        while current > 0 {
            let grabbed = min(current, wanted)
            let (exchanged, original) = free.compareExchange(
                expected: current, desired: current - grabbed, ordering: .acquiringAndReleasing)
            if exchanged { return grabbed }
            current = original
        }
        return 0
    }

    /// Gives back one slot.
    func release() { release(1) }

    /// Gives back `returned` slots, waking sleepers. A full pipe drops the
    /// bytes: its sleepers have bytes to wake them already.
    func release(_ returned: Int) {
        guard returned > 0 else { return }
        free.add(returned, ordering: .sequentiallyConsistent)
        let asleep = sleepers.load(ordering: .sequentiallyConsistent)
        guard asleep > 0 else { return }
        let bytes = [UInt8](repeating: 1, count: min(returned, asleep))
        _ = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress!, $0.count) }
    }
}
