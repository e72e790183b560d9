import Dispatch
import Synchronization
import PlugboardCore

/// Threads for calls that may block: a task executor (and a plain queue of
/// closures) that starts a thread whenever every thread it has is busy, up
/// to `maximum`. In an isolated child they serve the host's calls, so a
/// requirement that blocks (a synchronous wait, a lock, a slow system call)
/// holds one of these, not one of the two or so threads of Swift's shared
/// pool, and calls overlap however they wait; an `async` requirement that
/// suspends frees its thread. In the host they make the blocking isolated
/// calls of ``IsolatedCallPolicy/withoutBlocking(_:)``.
final class CallThreads: TaskExecutor {
    private struct State {
        var work: [@Sendable () -> Void] = []
        var next = 0
        var threads = 0
        var busy = 0
    }

    private let state = Mutex(State())
    /// One signal per piece of work queued.
    private let queued = DispatchSemaphore(value: 0)
    let maximum: Int

    init(maximum: Int) {
        self.maximum = max(1, maximum)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        run { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Runs `work` on one of the threads, as soon as one is free.
    func run(_ work: @escaping @Sendable () -> Void) {
        let start = state.withLock { state -> Bool in
            state.work.append(work)
            let waiting = state.work.count - state.next
            guard state.threads - state.busy < waiting, state.threads < maximum else { return false }
            state.threads += 1
            return true
        }
        queued.signal()
        // 2 MiB stacks: 1,024 calls in flight reserve 2 GiB of the child's
        // 4 GiB address space. Without a thread, the work waits for one.
        if start, !startDetachedThread(stackSize: 2 << 20, { [self] in serve() }) {
            state.withLock { $0.threads -= 1 }
        }
    }

    private func serve() {
        while true {
            queued.wait()
            let work = state.withLock { state -> @Sendable () -> Void in
                let work = state.work[state.next]
                state.next += 1
                if state.next == state.work.count {
                    state.work.removeAll(keepingCapacity: true)
                    state.next = 0
                }
                state.busy += 1
                return work
            }
            work()
            state.withLock { $0.busy -= 1 }
        }
    }
}
