/// What the kernel counts of an isolated plugin's children, and the bounds
/// they run under (docs/sandbox.md, "Resources"): in
/// ``IsolationStatus/resources``, so in the snapshot and `inspect --json`
/// (the bounds alone before a child runs). A pool's figures are its
/// children's sums. Where no cgroup counts a figure, `/proc` gives the
/// child's own (its resident memory, threads, CPU time); nil where neither does.
public struct ResourceUsage: Sendable, Equatable, Codable {
    /// Memory charged to the children now, and the most a child ever held, bytes.
    public var memory: Int?
    public var peakMemory: Int?
    /// Their threads and processes now.
    public var tasks: Int?
    /// CPU time they used, seconds.
    public var cpuSeconds: Double?
    /// Times the kernel ended one for passing its memory bound.
    public var outOfMemoryKills: Int?
    /// The bounds each child runs under (nil: none), and what holds them:
    /// `cgroup v1`, `cgroup v2`, `none` (this machine gave no cgroup), with
    /// the host's task sampler where no cgroup counts tasks.
    public var memoryLimit: Int?
    public var tasksLimit: Int?
    public var cpuCoresLimit: Double?
    public var boundBy: String

    package init(boundBy: String) {
        self.boundBy = boundBy
    }

    /// Both children's figures together (a pool).
    package func adding(_ other: ResourceUsage) -> ResourceUsage {
        func sum<T: AdditiveArithmetic>(_ one: T?, _ two: T?) -> T? { one.map { $0 + (two ?? .zero) } ?? two }
        var total = self
        total.memory = sum(memory, other.memory)
        total.peakMemory = [peakMemory, other.peakMemory].compactMap { $0 }.max()
        total.tasks = sum(tasks, other.tasks)
        total.cpuSeconds = sum(cpuSeconds, other.cpuSeconds)
        total.outOfMemoryKills = sum(outOfMemoryKills, other.outOfMemoryKills)
        return total
    }
}
