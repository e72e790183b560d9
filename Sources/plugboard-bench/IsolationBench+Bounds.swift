import CBenchFloor
import Foundation
import Plugboard
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// The isolation group's rows for a child's resource bounds.
extension IsolationBench {
    /// A child in its cgroup leaf (the default bounds) against one without
    /// bounds, interleaved: a restart (spawn, leaf, placement, start) and calls.
    func bounded(_ dir: String, into report: Report) {
        var unbounded = PluginIsolation.isolated
        (unbounded.limits.memory, unbounded.limits.tasks, unbounded.limits.cpuCores) = (nil, nil, nil)
        guard let with = host(dir, isolation: .isolated, label: "bounded"), let without = host(dir, isolation: unbounded, label: "unbounded"),
              let bounded = command(with), let plain = command(without) else { return }
        defer { [with, without].forEach { $0.shutdown() } }
        // Every restart spawns: a spare made ready or not by the time of the
        // next call would make two kinds of samples of one row.
        [with, without].forEach { $0.keepsSpareChildren(false, of: "fixture.isolation-faults") }
        report.begin("Resource bounds of a child (a cgroup leaf with the default bounds, memory and tasks; ms, µs)")
        var restarts: [Bool: [Double]] = [true: [], false: []]
        for _ in 0..<30 {
            for (command, isBounded) in [(bounded, true), (plain, false)] {
                _ = try? command.run(arguments: ["segv"])
                let start = Measure.now()
                guard (try? command.run(arguments: ["echo", "x"])) == "x" else { continue }
                restarts[isBounded, default: []].append(Double(Measure.now() - start) / 1_000_000)
            }
        }
        report.add("restart of a bounded child (spawning)", unit: "ms", samples: restarts[true] ?? [],
                   baselineName: "the same child without bounds", baseline: restarts[false] ?? [], goal: .ratioAtMost(1.05))
        // Interleaved in quarters, so load on the machine falls on both alike.
        var calls: [Double] = [], plainCalls: [Double] = []
        for _ in 0..<4 {
            calls += timedCalls(with, payload: 1, count: Self.calls / 4)
            plainCalls += timedCalls(without, payload: 1, count: Self.calls / 4)
        }
        report.add("isolated call, 1 B, p50, in a bounded child", unit: "µs", samples: [percentile(calls, 0.5)],
                   baselineName: "the same child without bounds", baseline: [percentile(plainCalls, 0.5)], goal: .ratioAtMost(1.05))
        var quota = PluginIsolation.isolated
        quota.limits.cpuCores = 1
        if let capped = host(dir, isolation: quota, label: "quota") {  // opt-in: the scheduler's bandwidth control
            let cappedCalls = timedCalls(capped, payload: 1, count: Self.calls)
            report.add("isolated call, 1 B, p50, in a child with a 1-core quota", unit: "µs", samples: [percentile(cappedCalls, 0.5)],
                       baselineName: "the same child without bounds", baseline: [percentile(plainCalls, 0.5)])
            capped.shutdown()
        }
        // A spinner's share: a quarter-core quota, CPU time (the cgroup's
        // count) over the wall time of a 1 s spin.
        quota.limits.cpuCores = 0.25
        if let quarter = host(dir, isolation: quota, label: "quarter"), let spinner = command(quarter) {
            func cpu() -> Double? { quarter.snapshot().first { $0.id == "fixture.isolation-faults" }?.isolation?.resources?.cpuSeconds }
            let before = cpu(), start = Measure.now()
            _ = try? spinner.run(arguments: ["serial-spin", "1000"])
            let wall = Double(Measure.now() - start) / 1e9
            if let before, let after = cpu() {
                report.add("CPU a spinner took per second with a 0.25-core quota", unit: "cores", samples: [(after - before) / wall],
                           baselineName: "its quota", baseline: [0.25], goal: .ratioAtMost(1.1))
            }
            quarter.shutdown()
        }
    }
}
