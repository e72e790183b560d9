import Dispatch
import Synchronization

/// One call made through ``IsolatedCallPolicy/withoutBlocking(_:)``: resumes its
/// caller once (with the result, or `CancellationError` when its task is
/// cancelled first), and tells the child serving an isolated call made
/// inside it to cancel the task serving it.
final class CallCancellation: Sendable {
    /// The call being made from inside ``IsolatedCallPolicy/withoutBlocking(_:)`` on this thread.
    @TaskLocal static var current: CallCancellation?

    private struct State {
        var cancelled = false
        var resume: (@Sendable (Result<any Sendable, any Error>) -> Void)?
        /// The isolated calls in flight inside it, by child.
        var calls: [(child: IsolatedChildProcess, sequence: UInt64)] = []
    }

    private let state = Mutex(State())

    /// Sets what resumes the caller; false when it was cancelled already (then it was not set).
    func waiting(_ resume: @escaping @Sendable (Result<any Sendable, any Error>) -> Void) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.resume = resume
            return true
        }
    }

    /// The call's outcome: resumes the caller unless a cancellation did.
    func finish(_ result: Result<any Sendable, any Error>) {
        let resume = state.withLock { state in
            defer { state.resume = nil }
            return state.resume
        }
        resume?(result)
    }

    /// The caller's task was cancelled: it resumes now with
    /// `CancellationError`; isolated calls in flight are cancelled in their
    /// child (their reply, if one still comes, is dropped).
    func cancel() {
        let (resume, calls) = state.withLock { state in
            state.cancelled = true
            defer { state.resume = nil }
            return (state.resume, state.calls)
        }
        // Written off this thread (the cancelling task's), whole, waiting
        // for the channel if a request is being written.
        for call in calls { call.child.cancelCall(call.sequence) }
        resume?(.failure(CancellationError()))
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// An isolated call is about to be sent; false when the caller was cancelled (do not send it).
    func sending(_ sequence: UInt64, to child: IsolatedChildProcess) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.calls.append((child, sequence))
            return true
        }
    }

    /// The isolated call was answered (or failed).
    func answered(_ sequence: UInt64) {
        state.withLock { state in state.calls.removeAll { $0.sequence == sequence } }
    }
}
