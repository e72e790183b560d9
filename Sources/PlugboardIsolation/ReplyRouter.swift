import Dispatch
import Synchronization
import PlugboardCore
#if canImport(Glibc)
import Glibc
#endif

/// The host's side of one child's channel with many calls in flight: each
/// request goes out with its own sequence number, and each reply is handed
/// to the caller waiting for that number.
///
/// No thread of its own: a waiting caller that finds nobody reading reads
/// for everyone (a leader/follower scheme). A lone call reads its own reply
/// straight from the pipe, as a one-call-at-a-time channel would; a reply
/// for another caller is put in that caller's slot and the caller woken,
/// and a reader whose own reply came hands the reading on to a caller
/// still waiting.
///
/// An async caller does not wait on a thread: its slot is *suspended*, and
/// whoever reads resumes its task with the reply (see
/// ReplyRouter+Suspending.swift; with no caller thread reading, the
/// router's own reader thread does).
///
/// Lock-free: with 16 threads calling one plugin, one lock for the waiting
/// callers took 40% of the host's CPU spinning in `Mutex`'s slow path.
/// Each request owns a ``Slot`` found from its sequence; a slot moves
/// between states by compare-and-exchange on one word holding the sequence
/// and the state, so a late reply never lands in a slot reused since.
final class ReplyRouter: Sendable {
    package enum Failure: Error, Equatable {
        /// The child closed its end, or the channel was closed here.
        case closed
        /// The request could not be written whole before the deadline.
        case sendTimedOut
        /// No reply before the deadline.
        case timedOut
        /// The child sent something the protocol does not allow.
        case malformed(String)
        /// The suspended caller's task was cancelled first.
        case cancelled
    }

    enum Outcome {
        case frame(FrameChannel.Frame)
        case failed(Failure)

        var result: Result<FrameChannel.Frame, Failure> {
            switch self {
            case let .frame(frame): .success(frame)
            case let .failed(failure): .failure(failure)
            }
        }
    }

    /// A slot's state, the low bits of its word; the sequence is above them.
    enum State: UInt64 {
        /// Claimed, its request being sent.
        case sending = 1
        /// Sent: waiting for its reply, or for the reading.
        case waiting = 2
        /// Someone is writing its outcome.
        case delivering = 3
        /// Its outcome is written and its semaphore signalled.
        case delivered = 4
        /// The reading was handed to it, and its semaphore signalled.
        case turn = 5
        /// Sent by a task that is suspended: its reply resumes it (it never reads).
        case suspended = 6
    }

    /// One request's place.
    final class Slot: @unchecked Sendable {
        // @unchecked: `outcome` is written only by the thread that moved
        // `word` to `.delivering` (a compare-and-exchange only one wins),
        // before it stores `.delivered` and signals `wake`; the owner reads
        // it only after its `wake.wait()` returned for that signal.
        // `resume` is written by the owner before it moves `word` to
        // `.suspended` (or after a failed move, with no one else holding
        // the slot), and read and cleared only by the one thread that then
        // moves it from `.suspended` to `.delivering`.
        let word = Atomic<UInt64>(0)
        let wake = DispatchSemaphore(value: 0)
        var outcome: Outcome?
        var resume: (@Sendable (Outcome) -> Void)?
        /// A suspended request's deadline (nanoseconds after the router's `epoch`).
        let deadline = Atomic<Int64>(0)
    }

    static let stateBits: UInt64 = 3
    static func word(_ sequence: UInt64, _ state: State) -> UInt64 { sequence << stateBits | state.rawValue }
    static func state(of word: UInt64) -> State? { State(rawValue: word & (1 << stateBits - 1)) }

    /// Who reads the pipe.
    enum Reading: Int {
        case nobody = 0, someone = 1
        /// Closed for good: nobody reads again.
        case closed = 2
    }

    let channel: FrameChannel
    let slots: [Slot]
    private let mask: Int
    let reading = Atomic<Int>(Reading.nobody.rawValue)
    let requests = Atomic<Int>(0)
    /// Slots in the waiting state: a reader leaving looks for one to hand
    /// the reading to only when there is one (a lone call scans nothing).
    let parked = Atomic<Int>(0)
    /// Slots in the suspended state: while there are any, someone reads.
    let suspended = Atomic<Int>(0)
    let isBroken = Atomic<Bool>(false)
    let closeRequested = Atomic<Bool>(false)
    /// Set once: every waiter and every later request fails with it (rare: a lock is fine).
    private let broken = Mutex<Failure?>(nil)
    /// Requests waiting for a free slot, and their wake-up (signalled only
    /// when one waits: the usual release pays one atomic load).
    private let slotWaiters = Atomic<Int>(0)
    private let slotFreed = DispatchSemaphore(value: 0)
    /// The router's reader thread, started by the first suspended request:
    /// it reads while requests are suspended and no caller thread reads.
    /// Signalled once per hand-over of the reading to it (and by a close).
    let readerStarted = Atomic<Bool>(false)
    let readerTurn = DispatchSemaphore(value: 0)
    let readerEnds = Atomic<Bool>(false)
    /// Where suspended requests' deadlines count from, and when a reader
    /// looks for those past theirs next.
    let epoch = ContinuousClock.now
    let nextExpiry = Atomic<Int64>(0)

    /// `capacity`: the requests that may be in flight at once (more wait for a slot).
    init(channel: FrameChannel, capacity: Int = 64) {
        self.channel = channel
        var count = 64
        while count < 2 * capacity + 8 && count < 8_192 { count *= 2 }
        slots = (0..<count).map { _ in Slot() }
        mask = count - 1
    }

    /// Requests waiting for their reply now.
    var inFlight: Int { requests.load(ordering: .relaxed) }

    /// No request waits, and no reader saw the channel break: a child that
    /// died now died between calls (a call that saw it die tells itself).
    var idle: Bool { requests.load(ordering: .sequentiallyConsistent) == 0 && !isBroken.load(ordering: .sequentiallyConsistent) }

    var brokenFailure: Failure { broken.withLock { $0 } ?? .closed }

    /// Sends one request and waits for its reply until `deadline`.
    func exchange(
        _ kind: UInt8, sequence: UInt64, until deadline: ContinuousClock.Instant, capacity: Int = 0, fill: (inout [UInt8]) -> Void
    ) throws(Failure) -> FrameChannel.Frame {
        if isBroken.load(ordering: .sequentiallyConsistent) { throw brokenFailure }
        let slot = try claim(sequence, until: deadline)
        // Claimed, then checked: a break either saw this slot or is seen here.
        if isBroken.load(ordering: .sequentiallyConsistent) {
            release(slot, sequence, from: .sending)
            throw brokenFailure
        }
        switch channel.send(kind, sequence: sequence, until: deadline, capacity: capacity, fill: fill) {
        case .sent: break
        case .closed:
            release(slot, sequence, from: .sending)
            throw .closed
        case .timedOut:
            release(slot, sequence, from: .sending)
            throw .sendTimedOut
        }
        // Sent: only now may the reading be handed to it (a caller still
        // writing into a full pipe would leave the replies unread).
        guard slot.word.compareExchange(expected: Self.word(sequence, .sending), desired: Self.word(sequence, .waiting), ordering: .sequentiallyConsistent).exchanged else {
            return try take(settle(slot, sequence), slot)
        }
        // Counted before it looks for a reader: one leaving either sees it or left the reading to it.
        parked.add(1, ordering: .sequentiallyConsistent)
        return try reply(to: sequence, slot, until: deadline)
    }

    /// A free slot for `sequence`, found from it (the reader looks there first).
    private func claim(_ sequence: UInt64, until deadline: ContinuousClock.Instant) throws(Failure) -> Slot {
        while true {
            if let slot = claimNow(sequence) { return slot }
            // Every slot taken (more requests than twice the capacity: the
            // call slots keep it from happening): sleep until one is freed.
            slotWaiters.add(1, ordering: .sequentiallyConsistent)
            defer { slotWaiters.subtract(1, ordering: .sequentiallyConsistent) }
            // Counted first, then looked at again: a slot freed in between is seen here.
            if slots.contains(where: { $0.word.load(ordering: .sequentiallyConsistent) == 0 }) { continue }
            guard slotFreed.wait(until: deadline) else { throw .sendTimedOut }
        }
    }

    /// A free slot for `sequence` if there is one now.
    func claimNow(_ sequence: UInt64) -> Slot? {
        var index = Int(truncatingIfNeeded: sequence) & mask
        for _ in 0...mask {
            let slot = slots[index]
            if slot.word.compareExchange(expected: 0, desired: Self.word(sequence, .sending), ordering: .sequentiallyConsistent).exchanged {
                requests.add(1, ordering: .sequentiallyConsistent)
                return slot
            }
            index = (index + 1) & mask
        }
        return nil
    }

    /// A slot is free again: wakes a request waiting for one, if any.
    func slotReleased() {
        if slotWaiters.load(ordering: .sequentiallyConsistent) > 0 { slotFreed.signal() }
    }

    /// The slot whose request has `sequence`, if one waits for it.
    func slot(for sequence: UInt64) -> Slot? {
        var index = Int(truncatingIfNeeded: sequence) & mask
        for _ in 0...mask {
            let slot = slots[index]
            if slot.word.load(ordering: .acquiring) >> Self.stateBits == sequence { return slot }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Frees a slot its owner holds (no outcome pending).
    func free(_ slot: Slot) {
        slot.outcome = nil
        slot.resume = nil
        slot.word.store(0, ordering: .sequentiallyConsistent)
        requests.subtract(1, ordering: .sequentiallyConsistent)
        slotReleased()
    }

    /// The owner gives up its slot in `state`; when something came for it
    /// meanwhile (an outcome, or the reading), that is settled first.
    func release(_ slot: Slot, _ sequence: UInt64, from state: State) {
        if slot.word.compareExchange(expected: Self.word(sequence, state), desired: 0, ordering: .sequentiallyConsistent).exchanged {
            if state == .waiting { parked.subtract(1, ordering: .sequentiallyConsistent) }
        } else {
            if case .turn = settle(slot, sequence) { leaveReading() }
            slot.outcome = nil
            slot.word.store(0, ordering: .sequentiallyConsistent)
        }
        requests.subtract(1, ordering: .sequentiallyConsistent)
        slotReleased()
    }

    /// A waiting owner leaves with nothing: false when something came for
    /// its slot meanwhile (an outcome, or the reading), to be settled.
    func giveUp(_ slot: Slot, _ sequence: UInt64) -> Bool {
        guard slot.word.compareExchange(expected: Self.word(sequence, .waiting), desired: 0, ordering: .sequentiallyConsistent).exchanged else { return false }
        parked.subtract(1, ordering: .sequentiallyConsistent)
        requests.subtract(1, ordering: .sequentiallyConsistent)
        slotReleased()
        return true
    }

    enum Settled {
        case outcome(Outcome)
        case turn
    }

    /// Waits for the signal that follows a change of the slot's state by
    /// someone else (imminent: it is signalled right after), and says what came.
    func settle(_ slot: Slot, _ sequence: UInt64) -> Settled {
        slot.wake.wait()
        if Self.state(of: slot.word.load(ordering: .sequentiallyConsistent)) == .turn { return .turn }
        return .outcome(slot.outcome ?? .failed(brokenFailure))
    }

    func take(_ settled: Settled, _ slot: Slot) throws(Failure) -> FrameChannel.Frame {
        switch settled {
        case let .outcome(outcome):
            free(slot)
            switch outcome {
            case let .frame(frame): return frame
            case let .failed(failure): throw failure
            }
        case .turn:
            // Handed the reading as it gave up (its deadline passed): passed on.
            leaveReading()
            free(slot)
            throw isBroken.load(ordering: .sequentiallyConsistent) ? brokenFailure : .timedOut
        }
    }

    /// The channel broke: every request fails with `failure` (or the first failure), now and later.
    func breakChannel(_ failure: Failure) {
        let failure = broken.withLock { broken in
            if broken == nil { broken = failure }
            return broken ?? failure
        }
        isBroken.store(true, ordering: .sequentiallyConsistent)
        for slot in slots {
            let word = slot.word.load(ordering: .sequentiallyConsistent)
            guard word != 0 else { continue }
            deliver(.failed(failure), to: slot, sequence: word >> Self.stateBits)
        }
    }

    /// Closes the channel: every waiter and later request fails with
    /// `.closed`. A reader inside a read closes it as it leaves (its
    /// descriptor must not be closed under it: the number could be reused).
    func close() {
        breakChannel(.closed)
        closeRequested.store(true, ordering: .sequentiallyConsistent)
        if reading.compareExchange(expected: Reading.nobody.rawValue, desired: Reading.closed.rawValue, ordering: .sequentiallyConsistent).exchanged {
            channel.close()
        }
        endReader()
    }
}

extension FrameChannel.Failure {
    var routerFailure: ReplyRouter.Failure {
        switch self {
        case .closed: .closed
        case .timedOut: .timedOut
        case let .malformed(reason): .malformed(reason)
        }
    }
}
