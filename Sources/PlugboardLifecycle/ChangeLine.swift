import Synchronization
import PlugboardCore

/// The lifecycle's one line of work: starts, reloads, retirements and
/// shutdown run one at a time, each seeing the table the previous one left.
///
/// It knows which threads run plugin code for the lifecycle: the thread
/// inside the work, and any thread inside ``shielding(_:)`` (a quarantine's
/// cascade on an isolation thread, `contributions()` of a published point).
/// A request made there (a lookup of a point whose providers are not
/// started, an event with a trigger) must not start anything or wait for
/// the work it may be part of: ``isCurrentThread`` says so, and the
/// lifecycle answers with what is already active. No caller sets a flag.
final class SerialWork: Sendable {
    /// Whether the host shut down: nothing starts after that.
    private let lock = Mutex(false)
    /// The thread inside the work (0: none).
    private let worker = Atomic<UInt>(0)
    /// Threads running plugin code for the lifecycle outside the work, once
    /// per ``shielding(_:)`` they are in (a shielded call may shield again).
    /// An array: few threads at once, and a `[UInt: Int]` here cost a warm
    /// start 3.5% more instructions (`make bench-check`, same run).
    private let shielded = Mutex<[UInt]>([])
    private let shieldedCount = Atomic<Int>(0)

    init() {}

    /// Whether the calling thread runs plugin code for the lifecycle now.
    var isCurrentThread: Bool {
        let me = currentThreadIdentity()
        if worker.load(ordering: .acquiring) == me { return true }
        guard shieldedCount.load(ordering: .acquiring) > 0 else { return false }
        return shielded.withLock { $0.contains(me) }
    }

    /// Runs `body` when the work before it is done; `body` may mark the host shut down.
    /// The calling thread must not be inside the work already (``isCurrentThread``).
    func run<Result: Sendable>(_ body: (_ shutDown: inout Bool) -> Result) -> Result {
        precondition(!isCurrentThread, "code the host runs while it starts or stops plugins (plugin code, a reload's beforeActing, an event or diagnostic handler) asked it to reload, refresh or shut down")
        return lock.withLock { shutDown in inside(&shutDown, body) }
    }

    /// Runs `body` now if no work is under way (nil otherwise, and `body`
    /// does not run). The calling thread must not be inside the work.
    func runIfFree<Result: Sendable>(_ body: (_ shutDown: inout Bool) -> Result) -> Result? {
        precondition(!isCurrentThread, "runIfFree from inside the work")
        return lock.withLockIfAvailable { shutDown in inside(&shutDown, body) }
    }

    /// `body` as the work, on this thread (the lock held).
    private func inside<Result>(_ shutDown: inout Bool, _ body: (_ shutDown: inout Bool) -> Result) -> Result {
        worker.store(currentThreadIdentity(), ordering: .releasing)
        defer { worker.store(0, ordering: .releasing) }
        return body(&shutDown)
    }

    /// Runs `body`, plugin code the lifecycle calls outside the work, with
    /// the calling thread marked as running it.
    func shielding<Result>(_ body: () throws -> Result) rethrows -> Result {
        let me = currentThreadIdentity()
        shielded.withLock { $0.append(me) }
        shieldedCount.add(1, ordering: .releasing)
        defer {
            shieldedCount.subtract(1, ordering: .releasing)
            shielded.withLock { threads in
                if let index = threads.lastIndex(of: me) { threads.remove(at: index) }
            }
        }
        return try body()
    }
}
