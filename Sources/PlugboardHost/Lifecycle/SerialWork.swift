import Synchronization

/// The lifecycle's one line of work: starts, reloads, retirements and
/// shutdown run one at a time, each seeing the table the previous one left.
///
/// It knows which thread is inside it. Plugin code the lifecycle runs
/// (`init`, `activate`, `deactivate`, a state save) runs on that thread, and
/// a request it makes there (a lookup of a point whose providers are not
/// started, an event with a trigger) must not wait for the work it is part
/// of: ``isCurrentThread`` says so, and the lifecycle answers with what is
/// already active. No caller has to set a flag for this.
final class SerialWork: Sendable {
    /// Whether the host shut down: nothing starts after that.
    private let lock = Mutex(false)
    /// The thread inside the work (0: none).
    private let worker = Atomic<UInt>(0)

    init() {}

    /// Whether the calling thread is the one doing the work now.
    var isCurrentThread: Bool { worker.load(ordering: .acquiring) == currentThreadIdentity() }

    /// Runs `body` when the work before it is done; `body` may mark the host shut down.
    /// The calling thread must not be inside the work already (``isCurrentThread``).
    func run<Result: Sendable>(_ body: (_ shutDown: inout Bool) -> Result) -> Result {
        precondition(!isCurrentThread, "plugin code the host is starting or stopping asked the host to start or stop a plugin")
        return lock.withLock { shutDown in
            worker.store(currentThreadIdentity(), ordering: .releasing)
            defer { worker.store(0, ordering: .releasing) }
            return body(&shutDown)
        }
    }
}
