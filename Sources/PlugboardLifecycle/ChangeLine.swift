import Synchronization
import PlugboardCore

/// The lifecycle's line of changes: reloads, a refresh's retirements,
/// cascades and shutdown run one at a time, each seeing the table the
/// previous one left. Starts never take it (each takes its plugin's
/// ``PluginLine``), and neither does a lookup: a change holds the lines of
/// the plugins it touches, so a start it affects waits for it and nothing
/// else does.
final class ChangeLine: Sendable {
    /// Whether the host shut down: nothing changes after that.
    private let lock = Mutex(false)
    /// The thread inside a change (0: none), to refuse a change asked from
    /// inside one (it would wait for itself) with a message instead of a hang.
    private let worker = Atomic<UInt>(0)

    init() {}

    /// Whether the calling thread is running a change now.
    var isCurrentThread: Bool { worker.load(ordering: .acquiring) == currentThreadIdentity() }

    /// Runs `body` when the change before it is done; `body` may mark the host shut down.
    func run<Result: Sendable>(_ body: (_ shutDown: inout Bool) -> Result) -> Result {
        precondition(!isCurrentThread, "code the host runs during a reload, a cascade or a shutdown (a plugin's init, activate or deactivate, a reload's beforeActing, an event or diagnostic handler) asked it to reload, refresh or shut down")
        return lock.withLock { shutDown in inside(&shutDown, body) }
    }

    /// Runs `body` now if no change is under way (nil otherwise, and `body`
    /// does not run). The calling thread must not be inside a change.
    func runIfFree<Result: Sendable>(_ body: (_ shutDown: inout Bool) -> Result) -> Result? {
        precondition(!isCurrentThread, "runIfFree from inside a change")
        return lock.withLockIfAvailable { shutDown in inside(&shutDown, body) }
    }

    private func inside<Result>(_ shutDown: inout Bool, _ body: (_ shutDown: inout Bool) -> Result) -> Result {
        worker.store(currentThreadIdentity(), ordering: .releasing)
        defer { worker.store(0, ordering: .releasing) }
        return body(&shutDown)
    }
}
