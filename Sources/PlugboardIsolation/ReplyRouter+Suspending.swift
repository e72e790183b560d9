import Dispatch
import PlugboardCore

/// Requests from async callers: the task writes its request itself and
/// suspends; whoever reads the channel resumes it with its reply. No thread
/// is handed the call and none waits for it: with caller threads reading
/// (the leader/follower scheme), they deliver it; with none, the router's
/// reader thread reads until no request is suspended.
///
/// A suspended request's deadline is kept by whoever reads: it reads at
/// most ``tick`` at a time while any is suspended and fails those past
/// their deadline (`timedOut`), as a waiting caller gives up at its own.
extension ReplyRouter {
    /// How late a suspended request's deadline may be seen.
    static let tick = Duration.milliseconds(20)

    /// Sends one request from the calling task and suspends it until its
    /// reply, its deadline, a broken channel or the task's cancellation
    /// (`.cancelled`, then `cancelled` runs: tell the child). Nil when it
    /// could not be sent without waiting (no free slot, the pipe full, a
    /// frame too long for one write, no reader thread): then nothing was
    /// sent, and the caller sends it the blocking way.
    func exchangeSuspending(
        _ kind: UInt8, sequence: UInt64, until deadline: ContinuousClock.Instant, capacity: Int = 0,
        fill: (inout [UInt8]) -> Void, cancelled: @escaping @Sendable () -> Void
    ) async -> Result<FrameChannel.Frame, Failure>? {
        if isBroken.load(ordering: .sequentiallyConsistent) { return .failure(brokenFailure) }
        guard readerRunning(), let slot = claimNow(sequence) else { return nil }
        // Claimed, then checked: a break either saw this slot or is seen here.
        if isBroken.load(ordering: .sequentiallyConsistent) {
            release(slot, sequence, from: .sending)
            return .failure(brokenFailure)
        }
        switch channel.sendNow(kind, sequence: sequence, capacity: capacity, fill: fill) {
        case .sent?: break
        case .closed?:
            release(slot, sequence, from: .sending)
            return .failure(.closed)
        case .timedOut?, nil:
            release(slot, sequence, from: .sending)
            return nil
        }
        slot.deadline.store(nanoseconds(at: deadline), ordering: .relaxed)
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<FrameChannel.Frame, Failure>, Never>) in
                slot.resume = { continuation.resume(returning: $0.result) }
                guard slot.word.compareExchange(expected: Self.word(sequence, .sending), desired: Self.word(sequence, .suspended),
                                                ordering: .sequentiallyConsistent).exchanged else {
                    // Its outcome (or a break) came while it was being sent: taken here.
                    slot.resume = nil
                    continuation.resume(returning: Result { () throws(Failure) in try take(settle(slot, sequence), slot) })
                    return
                }
                // Counted before it looks for a reader: one leaving either sees it or left the reading to it.
                suspended.add(1, ordering: .sequentiallyConsistent)
                // Cancelled before its handler could see it suspended.
                if withUnsafeCurrentTask(body: { $0?.isCancelled ?? false }), cancel(slot, sequence) { cancelled() }
                if reading.compareExchange(expected: Reading.nobody.rawValue, desired: Reading.someone.rawValue, ordering: .sequentiallyConsistent).exchanged {
                    readerTurn.signal()
                }
            }
        } onCancel: {
            if cancel(slot, sequence) { cancelled() }
        }
    }

    /// Resumes the suspended request of `sequence` with `.cancelled`; false
    /// when its outcome came first (or it is not suspended yet).
    private func cancel(_ slot: Slot, _ sequence: UInt64) -> Bool {
        guard slot.word.compareExchange(expected: Self.word(sequence, .suspended), desired: Self.word(sequence, .delivering),
                                        ordering: .sequentiallyConsistent).exchanged else { return false }
        resumeSuspended(slot, with: .failed(.cancelled))
        return true
    }

    /// Resumes the task of a slot this thread moved from suspended to
    /// delivering; the slot is freed first (the task may send again at once).
    func resumeSuspended(_ slot: Slot, with outcome: Outcome) {
        suspended.subtract(1, ordering: .sequentiallyConsistent)
        let resume = slot.resume
        free(slot)
        resume?(outcome)
    }

    /// Fails the suspended requests past their deadline, at most once a
    /// ``tick`` (the reader calls it after each frame while any is suspended).
    func expireSuspended() {
        let now = nanoseconds(at: .now)
        let due = nextExpiry.load(ordering: .relaxed)
        guard now >= due, nextExpiry.compareExchange(expected: due, desired: now + Int64(Self.tick / .nanoseconds(1)), ordering: .relaxed).exchanged else { return }
        for slot in slots {
            let word = slot.word.load(ordering: .sequentiallyConsistent)
            guard Self.state(of: word) == .suspended, slot.deadline.load(ordering: .relaxed) <= now else { continue }
            deliver(.failed(.timedOut), to: slot, sequence: word >> Self.stateBits)
        }
    }

    private func nanoseconds(at instant: ContinuousClock.Instant) -> Int64 {
        let elapsed = (instant - epoch).components
        return elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000
    }

    /// The reader thread, started with the first suspended request; false
    /// when no thread could be started (the request goes the blocking way).
    private func readerRunning() -> Bool {
        if readerStarted.load(ordering: .acquiring) { return true }
        guard readerStarted.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return true }
        guard startDetachedThread(stackSize: 256 << 10, { [self] in serveSuspended() }) else {
            readerStarted.store(false, ordering: .releasing)
            return false
        }
        return true
    }

    /// The reader thread: each signal hands it the reading (or ends it, after a close).
    private func serveSuspended() {
        while true {
            readerTurn.wait()
            if readerEnds.load(ordering: .sequentiallyConsistent) { return }
            readWhileSuspended()
        }
    }

    /// Reads for the suspended requests until none is (the reading held).
    private func readWhileSuspended() {
        while suspended.load(ordering: .sequentiallyConsistent) > 0, !isBroken.load(ordering: .sequentiallyConsistent) {
            do {
                let frame = try channel.receive(until: .now + Self.tick)
                deliver(.frame(frame), sequence: frame.sequence)
            } catch {
                switch error {
                case .timedOut: break
                case .closed: breakChannel(.closed)
                case let .malformed(reason): breakChannel(.malformed(reason))
                }
            }
            expireSuspended()
        }
        leaveReading()
    }

    /// After a close: the reader thread ends (once it leaves the reading, if it holds it).
    func endReader() {
        readerEnds.store(true, ordering: .sequentiallyConsistent)
        if readerStarted.load(ordering: .acquiring) { readerTurn.signal() }
    }
}
