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

    private struct Waiting {
        let wake: DispatchSemaphore
        var frame: FrameChannel.Frame?
        /// Waiting on `wake` now (not still sending, nor reading): the one to hand reading to.
        var parked = false
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
        let wake = DispatchSemaphore(value: 0)
        // Registered before it is sent: the reply may come at once.
        if let broken = state.withLock({ state -> Failure? in
            if let broken = state.broken { return broken }
            state.waiting[sequence] = Waiting(wake: wake)
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
        return try reply(to: sequence, wake: wake, until: deadline)
    }

    private enum Turn {
        case answered(FrameChannel.Frame)
        case failed(Failure)
        case read
        case wait
    }

    private func reply(to sequence: UInt64, wake: DispatchSemaphore, until deadline: ContinuousClock.Instant) throws(Failure) -> FrameChannel.Frame {
        while true {
            let turn = state.withLock { state -> Turn in
                state.waiting[sequence]?.parked = false
                if let frame = state.waiting[sequence]?.frame {
                    state.waiting[sequence] = nil
                    return .answered(frame)
                }
                if let broken = state.broken {
                    state.waiting[sequence] = nil
                    return .failed(broken)
                }
                if state.reading {
                    state.waiting[sequence]?.parked = true
                    return .wait
                }
                state.reading = true
                return .read
            }
            switch turn {
            case let .answered(frame): return frame
            case let .failed(failure): throw failure
            case .read: return try read(for: sequence, until: deadline)
            case .wait:
                // Clamped: a deadline centuries away must not overflow.
                let remaining = max(.zero, min(deadline - .now, .seconds(86_400 * 365)))
                guard wake.wait(timeout: .now() + .nanoseconds(Int((remaining / .nanoseconds(1)).rounded(.up)))) == .timedOut else { continue }
                let (frame, broken) = state.withLock { state -> (FrameChannel.Frame?, Failure?) in
                    // Once more under the lock: the reply may have come with
                    // the deadline, or the channel broken (which says more).
                    // Leaving, it hands on reading if it was given it.
                    defer {
                        state.waiting[sequence] = nil
                        if !state.reading { Self.wakeNextReader(&state) }
                    }
                    return (state.waiting[sequence]?.frame, state.broken)
                }
                if let frame { return frame }
                throw broken ?? .timedOut
            }
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
            let mine = state.withLock { state -> Bool in
                if frame.sequence == sequence { return true }
                // A reply no call waits for is dropped: its call gave up at
                // its deadline (the child is being killed for it), or the
                // child made it up.
                if state.waiting[frame.sequence]?.frame == nil, let waiting = state.waiting[frame.sequence] {
                    state.waiting[frame.sequence]?.frame = frame
                    waiting.wake.signal()
                }
                return false
            }
            if mine {
                stopReading(for: sequence, breaking: nil)
                return frame
            }
        }
    }

    /// This caller leaves: it stops reading, hands the reading to another
    /// waiter (or wakes them all when the channel broke).
    private func stopReading(for sequence: UInt64, breaking failure: Failure?) {
        let close = state.withLock { state -> Bool in
            state.reading = false
            state.waiting[sequence] = nil
            if let failure, state.broken == nil { state.broken = failure }
            if state.broken != nil {
                for waiting in state.waiting.values { waiting.wake.signal() }
            } else {
                Self.wakeNextReader(&state)
            }
            return state.closeWhenIdle
        }
        if close { channel.close() }
    }

    /// Wakes one parked waiter without its reply to take over the reading
    /// (one still sending would leave replies unread while it writes).
    private static func wakeNextReader(_ state: inout State) {
        state.waiting.values.first { $0.parked && $0.frame == nil }?.wake.signal()
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
            for waiting in state.waiting.values { waiting.wake.signal() }
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
