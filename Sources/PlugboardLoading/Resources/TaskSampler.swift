import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The tasks bound where no cgroup holds it (no pids controller for this
/// host: an ordinary user, a container without delegation): every
/// ``period`` the sampler reads each watched child's threads and ends one
/// that has more than its bound (`plugin-resource-exhausted`). A sample
/// cannot stop a burst between two reads (the kernel's `RLIMIT_NPROC` and
/// the sandbox's ban on new processes do); it stops a child holding more
/// than it may, which is what starves the host (docs/sandbox.md, "Resources").
package final class TaskSampler: Sendable {
    package static let shared = TaskSampler()
    package static let period = DispatchTimeInterval.milliseconds(100)

    struct Watch {
        let bound: Int
        let exceeded: @Sendable (_ tasks: Int) -> Void
    }

    private let watched = Mutex<[pid_t: Watch]>([:])
    /// Whether a sample is scheduled: one at a time, none while nothing is watched.
    private let scheduled = Mutex<Bool>(false)
    private let queue = DispatchQueue(label: "plugboard.task-sampler")

    /// Watches child `pid` until ``forget(_:)``; `exceeded` is called once,
    /// on the sampler's queue, with the tasks it counted.
    package func watch(_ pid: pid_t, bound: Int, exceeded: @escaping @Sendable (_ tasks: Int) -> Void) {
        watched.withLock { $0[pid] = Watch(bound: bound, exceeded: exceeded) }
        scheduleSample()
    }

    package func forget(_ pid: pid_t) {
        _ = watched.withLock { $0.removeValue(forKey: pid) }
    }

    private func scheduleSample() {
        guard scheduled.withLock({ scheduled in defer { scheduled = true }; return !scheduled }) else { return }
        queue.asyncAfter(deadline: .now() + Self.period) { [self] in sample() }
    }

    private func sample() {
        let now = watched.withLock { $0 }
        for (pid, watch) in now {
            guard let tasks = ProcessUsage.threads(of: pid), tasks > watch.bound else { continue }
            // Told once: the child is ended and forgotten.
            guard watched.withLock({ $0.removeValue(forKey: pid) }) != nil else { continue }
            watch.exceeded(tasks)
        }
        let more = watched.withLock { !$0.isEmpty }
        scheduled.withLock { $0 = false }
        if more { scheduleSample() }
    }
}
