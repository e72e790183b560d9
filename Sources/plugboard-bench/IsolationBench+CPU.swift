import CBenchFloor
import Foundation
import Plugboard
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// The CPU an isolated call costs, both processes together, against the C
/// pipe ping-pong's per round trip in the same placement: the caller and
/// the child on one CPU, then on two. (Latency floors mislead here: on two
/// CPUs a wake-up may cost 5x what it costs on one, and the floor must sit
/// where the call does.)
extension IsolationBench {
    /// These rows alone (`PLUGBOARD_BENCH_ONLY=cpu`).
    func runCPU(into report: Report) {
        withFixtureFolder("cpu") { dir in
            report.begin("CPU per isolated call (µs, both processes)")
            cpuPerCall(dir, into: report)
        }
    }

    func cpuPerCall(_ dir: String, into report: Report) {
        var cpus = [Int32](repeating: -1, count: 2)
        let count = bench_allowed_cpus(&cpus, 2)
        for (label, caller, child) in [("one CPU", cpus[0], cpus[0]), ("two CPUs", cpus[0], cpus[1])] {
            guard count >= (caller == child ? 1 : 2) else {
                print("  isolation bench: CPU per call on \(label) left out: this process may run on \(count) CPU(s)")
                continue
            }
            var floor = 0.0
            guard bench_pipe_pingpong_cpu(Int32(Self.calls), 1, caller, child, &floor) == 0 else { continue }
            // The host's thread on `caller`: the child it spawns starts there, then moves to `child`.
            guard bench_pin_thread_to(caller) == 0 else { continue }
            defer { bench_unpin() }
            guard let host = host(dir, isolation: .isolated, label: "cpu-\(caller)-\(child)"), let command = command(host),
                  let pid = host.snapshot().compactMap({ $0.isolation?.pid }).first
            else { continue }
            defer { host.shutdown() }
            for task in tasks(of: pid) { _ = bench_pin_task(task, child) }
            for _ in 0..<1_000 { _ = try? command.run(arguments: ["echo", "x"]) }
            let before = cpuNanoseconds(child: pid)
            for _ in 0..<Self.calls { _ = try? command.run(arguments: ["echo", "x"]) }
            let after = cpuNanoseconds(child: pid)
            let perCall = (after - before) / Double(Self.calls) / 1_000
            report.add("CPU per isolated 1 B call (host + child), \(label)", unit: "µs", samples: [perCall],
                       baselineName: "C pipe ping-pong, both processes, \(label)", baseline: [floor / 1_000],
                       goal: caller == child ? .ratioAtMost(3) : nil)
        }
    }

    /// This process's CPU time and the child's (every thread's, from schedstat), in ns.
    private func cpuNanoseconds(child pid: Int32) -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let own = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e9 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e3
        let child = tasks(of: pid).reduce(0.0) { sum, task in
            let line = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            return sum + (line.split(separator: " ").first.flatMap { Double($0) } ?? 0)
        }
        return own + child
    }

    private func tasks(of pid: Int32) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).compactMap { Int32($0) }
    }
}
