import Dispatch
import Synchronization

/// The host's side of one child's channel with many calls in flight: each
/// request goes out with its own sequence number, and each reply is handed
/// to the caller waiting for that number.
///
/// No thread of its own: a waiting caller that finds nobody reading reads
/// for everyone (a leader/follower scheme). A lone call reads its own reply
/// straight from the pipe, as a one-call-at-a-time channel would; a reply
/// for another caller is stored and that caller woken, and a reader whose
/// own reply came hands the reading on to a caller still waiting.
final class ReplyRouter: Sendable {
    enum Failure: Error, Equatable {
        /// The child closed its end, or the channel was closed here.
        case closed
        /// The request could not be written whole before the deadline.
        case sendTimedOut
        /// No reply before the deadline.
        case timedOut
        /// The child sent something the protocol does not allow.
        case malformed(String)
    }

    /// One request waiting for its reply. Its ``outcome`` is written under
    /// the router's lock, before ``wake`` is signalled: the woken caller
    /// reads it without taking the lock again (the semaphore orders the two),
    /// so a reply costs its caller no second turn at a lock every caller shares.
    private final class Waiting: @unchecked Sendable {
        // @unchecked: `outcome` and `parked` are written under the router's
        // `state` lock; the caller reads `outcome` under it too, or after
        // its `wake.wait()` returned (the signal follows the write).
        let wake = DispatchSemaphore(value: 0)
        var outcome: Outcome?
        /// Waiting on `wake` now (not still sending, nor reading): the one to hand reading to.
        var parked = false
    }

    private enum Outcome {
        case frame(FrameChannel.Frame)
        /// Given the reading (``State/reading`` set for it).
        case read
        case failed(Failure)
    }

    private struct State {
        var waiting: [UInt64: Waiting] = [:]
        /// A caller is reading the pipe now.
        var reading = false
        /// Set once: every waiter and every later request fails with it.
        var broken: Failure?
        /// Closed while someone read: the reader closes the channel as it leaves.
        var closeWhenIdle = false
    }

    let channel: FrameChannel
    private let state = Mutex(State())

    init(channel: FrameChannel) {
        self.channel = channel
    }

    /// Requests waiting for their reply now.
    var inFlight: Int { state.withLock { $0.waiting.count } }

    /// No request waits, and no reader saw the channel break: a child that
    /// died now died between calls (a call that saw it die tells itself).
    var idle: Bool { state.withLock { $0.waiting.isEmpty && $0.broken == nil } }

    /// Sends one request and waits for its reply until `deadline`.
    func exchange(
        _ kind: UInt8, sequence: UInt64, until deadline: ContinuousClock.Instant, fill: (inout [UInt8]) -> Void
    ) throws(Failure) -> FrameChannel.Frame {
        let waiting = Waiting()
        // Registered before it is sent: the reply may come at once.
        if let broken = state.withLock({ state -> Failure? in
            if let broken = state.broken { return broken }
            state.waiting[sequence] = waiting
            return nil
        }) {
            throw broken
        }
        switch channel.send(kind, sequence: sequence, until: deadline, fill: fill) {
        case .sent: break
        case .closed:
            forget(sequence)
            throw .closed
        case .timedOut:
            forget(sequence)
            throw .sendTimedOut
        }
        return try reply(to: sequence, waiting, until: deadline)
    }

    private enum Turn {
        case outcome(Outcome)
        case read
        case wait
    }

    private func reply(to sequence: UInt64, _ waiting: Waiting, until deadline: ContinuousClock.Instant) throws(Failure) -> FrameChannel.Frame {
        let turn = state.withLock { state -> Turn in
            if let outcome = waiting.outcome { return .outcome(outcome) }
            if let broken = state.broken {
                state.waiting[sequence] = nil
                return .outcome(.failed(broken))
            }
            if state.reading {
                waiting.parked = true
                return .wait
            }
            state.reading = true
            return .read
        }
        switch turn {
        case let .outcome(outcome): return try take(outcome, for: sequence, until: deadline)
        case .read: return try read(for: sequence, until: deadline)
        case .wait:
            // Clamped: a deadline centuries away must not overflow.
            let remaining = max(.zero, min(deadline - .now, .seconds(86_400 * 365)))
            if waiting.wake.wait(timeout: .now() + .nanoseconds(Int((remaining / .nanoseconds(1)).rounded(.up)))) == .success,
               let outcome = waiting.outcome {
                return try take(outcome, for: sequence, until: deadline)
            }
            // Its deadline: once more under the lock, as an outcome may
            // have come with it (a reply; or the reading, handed on as it leaves).
            let outcome = state.withLock { state -> Outcome in
                state.waiting[sequence] = nil
                waiting.parked = false
                switch waiting.outcome {
                case let .frame(frame)?: return .frame(frame)
                case .read?:
                    state.reading = false
                    Self.wakeNextReader(&state)
                case .failed?, nil: break
                }
                return .failed(state.broken ?? .timedOut)
            }
            return try take(outcome, for: sequence, until: deadline)
        }
    }

    private func take(_ outcome: Outcome, for sequence: UInt64, until deadline: ContinuousClock.Instant) throws(Failure) -> FrameChannel.Frame {
        switch outcome {
        case let .frame(frame): return frame
        case let .failed(failure): throw failure
        case .read: return try read(for: sequence, until: deadline)
        }
    }

    /// Reads frames for everyone until this caller's reply comes (or its
    /// deadline passes, or the channel breaks); the caller holds `reading`.
    private func read(for sequence: UInt64, until deadline: ContinuousClock.Instant) throws(Failure) -> FrameChannel.Frame {
        while true {
            let frame: FrameChannel.Frame
            do {
                frame = try channel.receive(until: deadline)
            } catch {
                switch error {
                case .timedOut: stopReading(for: sequence, breaking: nil)
                case .closed: stopReading(for: sequence, breaking: .closed)
                case let .malformed(reason): stopReading(for: sequence, breaking: .malformed(reason))
                }
                throw error.routerFailure
            }
            if frame.sequence == sequence {
                stopReading(for: sequence, breaking: nil)
                return frame
            }
            state.withLock { state in
                // A reply no call waits for is dropped: its call gave up at
                // its deadline (the child is being killed for it), or the
                // child made it up.
                guard let waiting = state.waiting.removeValue(forKey: frame.sequence) else { return }
                waiting.parked = false
                waiting.outcome = .frame(frame)
                waiting.wake.signal()
            }
        }
    }

    /// This caller leaves: it stops reading, hands the reading to another
    /// waiter (or fails them all when the channel broke).
    private func stopReading(for sequence: UInt64, breaking failure: Failure?) {
        let close = state.withLock { state -> Bool in
            state.reading = false
            state.waiting[sequence] = nil
            if let failure, state.broken == nil { state.broken = failure }
            if let broken = state.broken {
                Self.fail(&state, with: broken)
            } else {
                Self.wakeNextReader(&state)
            }
            return state.closeWhenIdle
        }
        if close { channel.close() }
    }

    /// Gives the reading to one parked waiter without its reply (one still
    /// sending would leave replies unread while it writes).
    private static func wakeNextReader(_ state: inout State) {
        guard let next = state.waiting.values.first(where: { $0.parked && $0.outcome == nil }) else { return }
        state.reading = true
        next.parked = false
        next.outcome = .read
        next.wake.signal()
    }

    /// Every waiter fails with `failure`.
    private static func fail(_ state: inout State, with failure: Failure) {
        for waiting in state.waiting.values where waiting.outcome == nil {
            waiting.outcome = .failed(failure)
            waiting.wake.signal()
        }
        state.waiting = [:]
    }

    private func forget(_ sequence: UInt64) {
        state.withLock { state in
            state.waiting[sequence] = nil
            if !state.reading { Self.wakeNextReader(&state) }
        }
    }

    /// Closes the channel: every waiter and later request fails with
    /// `.closed`. A reader inside a read closes it as it leaves (its
    /// descriptor must not be closed under it: the number could be reused).
    func close() {
        let now = state.withLock { state -> Bool in
            if state.broken == nil { state.broken = .closed }
            Self.fail(&state, with: state.broken ?? .closed)
            guard state.reading else { return true }
            state.closeWhenIdle = true
            return false
        }
        if now { channel.close() }
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
