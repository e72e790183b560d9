import FoundationEssentials
import PlugboardCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One child's cgroup leaf (of each v1 controller, or one v2 folder): its
/// bounds, its placement, what the kernel counts of it, and its removal
/// once the child is gone. Made by ``ChildCgroups/leaf(memory:tasks:cpuCores:)``.
package final class ChildCgroup: Sendable {
    let version: Int
    /// Per controller ("v2" for the one v2 folder), the leaf.
    package let folders: [String: String]

    /// Told once the child joined (or could not): the leaf is then the sweep's.
    private let whenPlaced: @Sendable () -> Void
    private let told = Atomic<Bool>(false)

    init(version: Int, folders: [String: String], placed: @escaping @Sendable () -> Void = {}) {
        self.version = version
        self.folders = folders
        whenPlaced = placed
    }

    private func placed() {
        if !told.exchange(true, ordering: .acquiringAndReleasing) { whenPlaced() }
    }

    /// The CPU quota's period: 100 ms, the kernel's default.
    static let period = 100_000

    /// Writes the bounds of `limits` that differ from those of `previous`
    /// (a leaf made ahead for another child's bounds); nil: unbounded.
    func limit(_ limits: ChildCgroups.LeafLimits, over previous: ChildCgroups.LeafLimits = .init()) {
        let quota = limits.cpuCores.map { max(1_000, Int(($0 * Double(Self.period)).rounded())) }
        let memory = limits.memory != previous.memory, tasks = limits.tasks != previous.tasks, cpu = limits.cpuCores != previous.cpuCores
        if version == 2 {
            guard let leaf = folders["v2"] else { return }
            let bytes = limits.memory.map(String.init) ?? "max"
            if memory { ChildCgroups.write(bytes, to: leaf + "/memory.max") }
            if memory { ChildCgroups.write(bytes, to: leaf + "/memory.swap.max") }
            if tasks { ChildCgroups.write(limits.tasks.map(String.init) ?? "max", to: leaf + "/pids.max") }
            if cpu { ChildCgroups.write("\(quota.map(String.init) ?? "max") \(Self.period)", to: leaf + "/cpu.max") }
            return
        }
        if memory, let leaf = folders["memory"] {
            // Swap too, where the kernel accounts it (the limit counts memory
            // plus swap). v1 keeps memory <= memory+swap at every write: a
            // raise over a leaf's earlier bound goes in the other order, so
            // the first write is retried last.
            let bytes = limits.memory.map(String.init) ?? "-1"
            let first = ChildCgroups.write(bytes, to: leaf + "/memory.limit_in_bytes")
            ChildCgroups.write(bytes, to: leaf + "/memory.memsw.limit_in_bytes")
            if !first { ChildCgroups.write(bytes, to: leaf + "/memory.limit_in_bytes") }
        }
        if tasks, let leaf = folders["pids"] { ChildCgroups.write(limits.tasks.map(String.init) ?? "max", to: leaf + "/pids.max") }
        if cpu, let leaf = folders["cpu"] {
            ChildCgroups.write(String(Self.period), to: leaf + "/cpu.cfs_period_us")
            ChildCgroups.write(quota.map(String.init) ?? "-1", to: leaf + "/cpu.cfs_quota_us")
        }
    }

    /// v1: the leaves a child joins itself, first thing (`PLUGBOARD_CGROUP`,
    /// cgroup_join.c: the fast way in); nil on v2, where the host places it.
    package var joinedByChild: String? {
        version == 1 ? folders.values.sorted().joined(separator: ":") : nil
    }

    /// The child joined (or could not, and said so): an empty leaf is the sweep's again.
    package func settled() {
        placed()
    }

    /// Moves process `pid` (every thread of it) into the leaf: before it is
    /// sent anything to load. The controllers it could not join, with why.
    package func place(_ pid: pid_t) -> [String] {
        defer { placed() }
        var failed: [String] = []
        for (controller, leaf) in folders.sorted(by: { $0.key < $1.key }) where !ChildCgroups.write(String(pid), to: leaf + "/cgroup.procs") {
            failed.append("\(controller) (\(String(cString: strerror(errno))))")
        }
        return failed
    }

    /// v2: kills every process in the leaf, those the plugin started in
    /// another process group too. False on v1, or a kernel without
    /// `cgroup.kill` (before 5.14).
    @discardableResult
    package func killAll() -> Bool {
        guard version == 2, let leaf = folders["v2"] else { return false }
        return ChildCgroups.write("1", to: leaf + "/cgroup.kill")
    }

    /// v2: whether a process is in the leaf (`cgroup.events`); nil on v1.
    package var populated: Bool? {
        guard version == 2, let leaf = folders["v2"] else { return nil }
        return Self.field("populated", in: leaf + "/cgroup.events").map { $0 == 1 }
    }

    /// What the kernel counts of it now.
    package func usage() -> ResourceUsage {
        var usage = ResourceUsage(boundBy: "cgroup v\(version)")
        if version == 2 {
            guard let leaf = folders["v2"] else { return usage }
            usage.memory = Self.number(leaf + "/memory.current")
            usage.peakMemory = Self.number(leaf + "/memory.peak")
            usage.tasks = Self.number(leaf + "/pids.current")
            usage.cpuSeconds = Self.field("usage_usec", in: leaf + "/cpu.stat").map { Double($0) / 1e6 }
            usage.outOfMemoryKills = Self.field("oom_kill", in: leaf + "/memory.events")
            return usage
        }
        if let leaf = folders["memory"] {
            usage.memory = Self.number(leaf + "/memory.usage_in_bytes")
            usage.peakMemory = Self.number(leaf + "/memory.max_usage_in_bytes")
            usage.outOfMemoryKills = Self.field("oom_kill", in: leaf + "/memory.oom_control")
        }
        if let leaf = folders["pids"] { usage.tasks = Self.number(leaf + "/pids.current") }
        if let leaf = folders["cpuacct"] { usage.cpuSeconds = Self.number(leaf + "/cpuacct.usage").map { Double($0) / 1e9 } }
        return usage
    }

    /// Whether the kernel killed its process for memory, read once it was
    /// reaped after a SIGKILL: a kill counted, or its leaf at its bound
    /// (a charge failed). The kernel counts the kill only after it sent the
    /// signal and printed its report, which a slow console can make take
    /// seconds (CI read 0 twice); a SIGKILL the host did not send to a child
    /// at its memory bound is the kernel's.
    package func killedForMemory() -> Bool {
        (usage().outOfMemoryKills ?? 0) > 0 || hitMemoryBound
    }

    /// A charge failed at the memory bound (v1 `failcnt`, v2 `memory.events` max).
    private var hitMemoryBound: Bool {
        if version == 2 { return folders["v2"].flatMap { Self.field("max", in: $0 + "/memory.events") }.map { $0 > 0 } ?? false }
        guard let leaf = folders["memory"] else { return false }
        return [leaf + "/memory.failcnt", leaf + "/memory.memsw.failcnt"].contains { (Self.number($0) ?? 0) > 0 }
    }

    /// Removes the leaf, once the child is reaped (its tasks gone). The
    /// memory it charged goes to the parent with it.
    package func remove() {
        placed()
        for leaf in folders.values { rmdir(leaf) }
    }

    static func number(_ path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int(text.split(whereSeparator: \.isWhitespace).first ?? "")
    }

    /// The number after `key` on its line of a flat-keyed cgroup file.
    static func field(_ key: String, in path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count == 2, words[0] == key { return Int(words[1]) }
        }
        return nil
    }
}
