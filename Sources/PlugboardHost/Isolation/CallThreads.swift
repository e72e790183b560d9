import Dispatch
import Synchronization

/// The threads an isolated child serves calls on: a task executor that
/// starts a thread whenever every thread it has is busy, up to `maximum`
/// (the host's calls in flight). A provider whose requirement blocks (a
/// synchronous wait, a lock, a slow system call) holds one of these, not
/// one of the two or so threads of Swift's shared pool, so that many calls
/// overlap however they wait; an `async` requirement that suspends frees its
/// thread for another call.
final class CallThreads: TaskExecutor {
    private struct State {
        var jobs: [UnownedJob] = []
        var next = 0
        var threads = 0
        var busy = 0
    }

    private let state = Mutex(State())
    /// One signal per job enqueued.
    private let work = DispatchSemaphore(value: 0)
    let maximum: Int

    init(maximum: Int) {
        self.maximum = max(1, maximum)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let start = state.withLock { state -> Bool in
            state.jobs.append(job)
            let waiting = state.jobs.count - state.next
            guard state.threads - state.busy < waiting, state.threads < maximum else { return false }
            state.threads += 1
            return true
        }
        work.signal()
        if start { _ = startDetachedThread { [self] in serve() } }
    }

    private func serve() {
        while true {
            work.wait()
            let job = state.withLock { state -> UnownedJob in
                let job = state.jobs[state.next]
                state.next += 1
                if state.next == state.jobs.count {
                    state.jobs.removeAll(keepingCapacity: true)
                    state.next = 0
                }
                state.busy += 1
                return job
            }
            job.runSynchronously(on: asUnownedTaskExecutor())
            state.withLock { $0.busy -= 1 }
        }
    }
}
