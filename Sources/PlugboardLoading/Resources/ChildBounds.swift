import PlugboardCore

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

    /// A cgroup leaf holding them, for one child (nil: none set, or no cgroup here).
    package func leaf(in cgroups: ChildCgroups = .process) -> ChildCgroup? {
        wanted.isEmpty ? nil : cgroups.leaf(memory: memory, tasks: tasks, cpuCores: cpuCores)
    }
}
