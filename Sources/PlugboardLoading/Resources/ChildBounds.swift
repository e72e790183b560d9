import PlugboardCore
#if canImport(Glibc)
import Glibc
#endif

/// The kernel's bounds of one child process (memory, tasks, CPU), as a
/// plugin's ``PluginIsolation/Limits`` set them, and whether this machine
/// can hold them (docs/sandbox.md, "Resources").
package struct ChildBounds: Sendable, Equatable {
    package var memory: Int?
    package var tasks: Int?
    package var cpuCores: Double?
    package var enforcement: PluginSandbox.Enforcement

    package init(_ limits: PluginIsolation.Limits) {
        memory = limits.memory
        tasks = limits.tasks
        cpuCores = limits.cpuCores
        enforcement = limits.bounds
    }

    /// The bounds set, as reports name them.
    package var wanted: [ChildCgroups.Bound] {
        [memory.map { _ in .memory }, tasks.map { _ in .tasks }, cpuCores.map { _ in .cpu }].compactMap { $0 }
    }

    /// Why each bound set cannot be held here (empty: all can).
    package func unreachable(in cgroups: ChildCgroups = .process) -> [String] {
        wanted.compactMap { bound in cgroups.missing[bound].map { "\(bound): \($0)" } }
    }

    /// The tasks bound ``TaskSampler`` holds: where no cgroup can.
    package func sampledTasks(in cgroups: ChildCgroups = .process) -> Int? {
        cgroups.missing[.tasks] == nil ? nil : tasks
    }

    /// The bounds that hold on this machine and what holds them, as
    /// ``ResourceUsage`` reports them (no figures).
    package func held(in cgroups: ChildCgroups = .process) -> ResourceUsage {
        var held = ResourceUsage(boundBy: cgroups.version.map { "cgroup v\($0)" } ?? "none")
        if !wanted.contains(where: cgroups.reachable.contains) { held.boundBy = "none" }
        held.memoryLimit = cgroups.reachable.contains(.memory) ? memory : nil
        held.cpuCoresLimit = cgroups.reachable.contains(.cpu) ? cpuCores : nil
        held.tasksLimit = tasks
        if sampledTasks(in: cgroups) != nil {
            held.boundBy = held.boundBy == "none" ? "the host's task sampler" : held.boundBy + ", tasks by the host's task sampler"
        }
        return held
    }

    /// A cgroup leaf holding them, for one child (nil: none set, or no cgroup here).
    package func leaf(in cgroups: ChildCgroups = .process) -> ChildCgroup? {
        wanted.isEmpty ? nil : cgroups.leaf(memory: memory, tasks: tasks, cpuCores: cpuCores)
    }

    /// Threads and processes kept for the host's own use when it runs as an
    /// ordinary user: its children may not take them.
    package static let reserve = 256

    /// The RLIMIT_NPROC a child of an ordinary user's host gets: the
    /// user's limit less ``reserve``. The limit counts every thread of the
    /// user (real uid), so a child bounded by it cannot take the last ones
    /// the host needs to start its other children, whatever a cgroup gives.
    /// Nil for root (exempt from the limit) or where the user has no limit.
    package static func processLimit() -> Int? {
        guard getuid() != 0 else { return nil }
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(__RLIMIT_NPROC.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max,
              limit.rlim_cur > rlim_t(2 * reserve) else { return nil }
        return Int(limit.rlim_cur) - reserve
    }
}
