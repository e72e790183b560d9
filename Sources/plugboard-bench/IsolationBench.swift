import CBenchFloor
import Foundation
import Plugboard
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// Isolated calls against their floor from the same run: a C ping-pong of
/// two processes over a pipe pair (the transport isolation uses), and the
/// same call in process. Also the child's start, a restart after a crash,
/// and its resident memory.
struct IsolationBench {
    /// The IsolationFaults fixture, release-built: its `fault echo ...` and `fault bytes N` commands.
    let plugin: String
    /// The AsyncQuoter fixture, release-built (the async path's rows); none: left out.
    var asyncPlugin: String?
    /// The C floor (`dlopen-baseline`) and an SDK-only plugin (BenchPlugin), for the lean child's memory.
    var floorProgram: String?
    var echoPlugin: String?
    static let calls = 20_000

    /// `folder`/plugins (0700) holding a copy of `file` named `name`; false
    /// (and said) when it cannot be made.
    func stage(_ file: String, in folder: String, as name: String) -> Bool {
        try? FileManager.default.createDirectory(atPath: folder + "/plugins", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard (try? FileManager.default.copyItem(atPath: file, toPath: folder + "/plugins/" + name)) != nil else {
            print("  isolation bench: cannot copy \(file) into \(folder)/plugins")
            return false
        }
        return true
    }

    /// Runs `body` with a fresh folder holding the fixture as plugins/plugin.so, removed after.
    func withFixtureFolder(_ label: String, _ body: (String) -> Void) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-\(label)-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        if stage(plugin, in: dir, as: "plugin.so") { body(dir) }
    }

    func run(into report: Report) {
        withFixtureFolder("isolation") { dir in runAll(dir, into: report) }
    }

    private func runAll(_ dir: String, into report: Report) {
        report.begin("Isolated calls (\(Self.calls) sequential calls each, µs per round trip, encoding included)")
        let floor1 = floor(bytes: 1), floor4K = floor(bytes: 4096), floor1M = floor(bytes: 1 << 20, rounds: 200)
        guard let isolated = host(dir, isolation: .isolated), let local = host(dir, isolation: .inProcess) else {
            print("  isolation bench: the fixture did not start")
            return
        }
        defer {
            isolated.shutdown()
            local.shutdown()
        }
        for (label, payload, base, goal) in [("1 B", 1, floor1, true), ("4 KiB", 4096, floor4K, true)] {
            let samples = timedCalls(isolated, payload: payload, count: Self.calls)
            report.add("isolated call, \(label) argument, p50", unit: "µs", samples: [percentile(samples, 0.5)],
                       baselineName: "C pipe ping-pong, \(label), p50", baseline: [percentile(base, 0.5)], goal: goal ? .ratioAtMost(2) : nil)
            report.add("isolated call, \(label) argument, p99", unit: "µs", samples: [percentile(samples, 0.99)],
                       baselineName: "C pipe ping-pong, \(label), p99", baseline: [percentile(base, 0.99)])
            let inProcess = timedCalls(local, payload: payload, count: Self.calls)
            report.add("isolated call, \(label), p50, against the same call in process", unit: "µs", samples: [percentile(samples, 0.5)],
                       baselineName: "in process, same API, p50", baseline: [percentile(inProcess, 0.5)])
        }
        let big = timedCalls(isolated, payload: 1 << 20, count: 200)
        let copy = memcpyMicroseconds(bytes: 1 << 20)
        report.add("isolated call, 1 MiB argument, p50", unit: "µs", samples: [percentile(big, 0.5)],
                   baselineName: "C pipe ping-pong, 1 MiB, p50", baseline: [percentile(floor1M, 0.5)],
                   note: String(format: "%.2f ns per byte; memcpy of 1 MiB here: %.1f µs (%.3f ns per byte)",
                                percentile(big, 0.5) * 1000 / Double(1 << 20), copy, copy * 1000 / Double(1 << 20)))
        cpuPerCall(dir, into: report)
        transports(pipe: ["1 B": floor1, "4 KiB": floor4K, "1 MiB": floor1M], into: report)
        concurrent(isolated, into: report)
        asyncPath(dir, into: report)
        pool(dir, into: report)
        startAndRestart(isolated, dir: dir, into: report)
        bounded(dir, into: report)
        sandboxed(dir, into: report)
    }

    /// A sandboxed child against a plain isolated one of the same run:
    /// calls, a restart after a crash (a child's whole start: spawn, the
    /// sandbox, handshake, load, init, activate), and a cold scan of the
    /// file with the scanner's sandbox against one without. Measured
    /// interleaved, so load on the machine falls on both sides alike.
    private func sandboxed(_ dir: String, into report: Report) {
        // On one CPU, both hosts and their children: across two cores a
        // call's latency depends on where each child first woke (cross-core
        // wake-ups cost up to 5x here, sandbox or not), not on the sandbox.
        let pinned = bench_pin_to_one_cpu() == 0
        defer { bench_unpin() }
        // A fresh plain host beside it, made the same way.
        guard let sandboxed = host(dir, isolation: .sandboxed), let isolated = host(dir, isolation: .isolated, label: "isolated-beside"),
              let plain = command(isolated), let confined = command(sandboxed)
        else {
            print("  isolation bench: the sandboxed fixture did not start")
            return
        }
        defer {
            sandboxed.shutdown()
            isolated.shutdown()
        }
        // Whole child starts, each spawned (no spare made in the background meanwhile).
        for host in [sandboxed, isolated] { host.keepsSpareChildren(false, of: "fixture.isolation-faults") }
        report.begin("Sandboxed plugin's child against a plain isolated one (µs; ms\(pinned ? "; both on one CPU" : ""))")
        var restarts: (sandboxed: [Double], isolated: [Double]) = ([], [])
        for _ in 0..<15 {
            for (command, sandbox) in [(plain, false), (confined, true)] {
                _ = try? command.run(arguments: ["segv"])
                let milliseconds = timed { _ = try? command.run(arguments: ["echo", "x"]) } / 1_000_000
                if sandbox { restarts.sandboxed.append(milliseconds) } else { restarts.isolated.append(milliseconds) }
            }
        }
        report.add("sandboxed child start (crash to the next answered call)", unit: "ms", samples: restarts.sandboxed,
                   baselineName: "plain isolated child start, same run", baseline: restarts.isolated, goal: .ratioAtMost(1.2))
        var calls: (sandboxed: [Double], isolated: [Double]) = ([], [])
        for _ in 0..<1_000 { _ = try? confined.run(arguments: ["echo", "x"]) }
        // After the restarts: both children were started the same way, from
        // this thread (where a child starts decides which core it wakes on).
        // Blocks of a thousand, alternating: call by call, one child would
        // always find the other just put to sleep.
        for _ in 0..<Self.calls / 2_000 {
            for _ in 0..<1_000 { calls.sandboxed.append(timed { _ = try? confined.run(arguments: ["echo", "x"]) } / 1_000) }
            for _ in 0..<1_000 { calls.isolated.append(timed { _ = try? plain.run(arguments: ["echo", "x"]) } / 1_000) }
        }
        report.add("sandboxed call, 1 B argument, p50", unit: "µs", samples: [percentile(calls.sandboxed, 0.5)],
                   baselineName: "isolated call, same run, p50", baseline: [percentile(calls.isolated, 0.5)], goal: .ratioAtMost(1.05))
        // Per file of a scan of eight: a scanner's start (and its sandbox)
        // is shared by the files it scans, as in a real discovery.
        let files = 8
        try? FileManager.default.createDirectory(atPath: dir + "/scan", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for index in 0..<files { try? FileManager.default.copyItem(atPath: plugin, toPath: dir + "/scan/libScanned\(index).so") }
        var scans: (sandboxed: [Double], plain: [Double]) = ([], [])
        for round in 0..<15 {
            for sandbox in [false, true] {
                var scanner = ScannerSettings()
                if !sandbox { scanner.sandbox = nil }
                let host = PluginHost(configuration: .with(
                    pluginsDirectory: dir + "/scan", logSink: BenchSuite.quiet, cacheDirectory: dir + "/scan-cache-\(round)-\(sandbox)",
                    scanner: scanner))
                let milliseconds = timed { _ = try? host.discover() } / 1_000_000 / Double(files)
                host.shutdown()
                if sandbox { scans.sandboxed.append(milliseconds) } else { scans.plain.append(milliseconds) }
            }
        }
        report.add("cold scan, per file of 8, scanner sandboxed", unit: "ms", samples: scans.sandboxed,
                   baselineName: "the same scan, scanner without its sandbox", baseline: scans.plain, goal: .ratioAtMost(1.1))
    }

    /// Calls from many threads at once to one isolated plugin: sixteen
    /// calls that each take 20 ms in the plugin against one alone (one at a
    /// time they would take sixteen times as long), and the rate of short
    /// calls from sixteen threads against one thread's.
    private func concurrent(_ host: PluginHost, into report: Report) {
        guard let command = command(host) else { return }
        let callers = 16
        func together(_ body: @escaping @Sendable () -> Void) -> Double { self.together(callers: callers, body) }
        var overlapped: [Double] = [], alone: [Double] = []
        for _ in 0..<7 {
            alone.append(timed { _ = try? command.run(arguments: ["sleep", "20"]) } / 1_000_000)
            overlapped.append(together { _ = try? command.run(arguments: ["sleep", "20"]) } / 1_000_000)
        }
        report.add("16 isolated calls of 20 ms at once, to one plugin", unit: "ms", samples: overlapped,
                   baselineName: "one such call alone", baseline: alone, goal: .ratioAtMost(1.5))
        let perCaller = 1_000
        var rates: (many: [Double], one: [Double]) = ([], [])
        for _ in 0..<5 {
            let one = timed { for _ in 0..<(callers * perCaller) { _ = try? command.run(arguments: ["echo", "x"]) } }
            let many = together { for _ in 0..<perCaller { _ = try? command.run(arguments: ["echo", "x"]) } }
            rates.one.append(one / 1_000 / Double(callers * perCaller))
            rates.many.append(many / 1_000 / Double(callers * perCaller))
        }
        report.add("isolated 1 B calls from 16 threads, µs per call (wall)", unit: "µs", samples: rates.many,
                   baselineName: "the same calls from one thread", baseline: rates.one,
                   note: String(format: "%.0f calls/s from 16 threads; go-plugin 1.0.1 net/rpc, measured on this machine for issue 36: 44,250",
                                1_000_000 / Measure.median(rates.many)))
        // Calls that wait 1 ms in the plugin (a blocking wait, on the child's
        // call threads): sixteen callers overlap them.
        let waits = 100
        var waiting: (many: [Double], one: [Double]) = ([], [])
        for _ in 0..<5 {
            let one = timed { for _ in 0..<(waits * 4) { _ = try? command.run(arguments: ["sleep", "1"]) } }
            let many = together { for _ in 0..<waits { _ = try? command.run(arguments: ["sleep", "1"]) } }
            waiting.one.append(one / 1_000 / Double(waits * 4))
            waiting.many.append(many / 1_000 / Double(callers * waits))
        }
        report.add("isolated calls that wait 1 ms, from 16 threads, µs per call (wall)", unit: "µs", samples: waiting.many,
                   baselineName: "the same calls from one thread", baseline: waiting.one, goal: .fasterAtLeast(11),
                   note: String(format: "%.0f calls/s from 16 threads; go-plugin net/rpc on this machine: 9,731", 1_000_000 / Measure.median(waiting.many)))
    }

    /// The shared-memory transport the issue asks to weigh, as C floors
    /// against the pipe's in the same run: a message copied in and out of
    /// shared memory with a futex wake, the receiver sleeping at once or
    /// after a bounded spin, for each message size.
    private func transports(pipe floors: [String: [Double]], into report: Report) {
        for (label, bytes, rounds) in [("1 B", 1, Self.calls), ("4 KiB", 4096, Self.calls), ("1 MiB", 1 << 20, 200)] {
            // The pipe's floor of this run, measured once.
            let pipe = floors[label] ?? []
            for (kind, spin) in [("futex", UInt64(0)), ("50 µs spin, then futex", UInt64(50_000))] {
                var samples = [Double](repeating: 0, count: rounds)
                guard bench_shm_pingpong(Int32(rounds), bytes, spin, &samples) == 0 else { continue }
                report.add("C shared-memory ping-pong (\(kind)), \(label), p50", unit: "µs", samples: [percentile(samples.map { $0 / 1_000 }, 0.5)],
                           baselineName: "C pipe ping-pong, \(label), p50", baseline: [percentile(pipe, 0.5)])
            }
        }
    }

    /// A CPU-bound call that one child runs one at a time (it holds the
    /// plugin's own lock), from 16 threads: a pool of two children against
    /// one, on this machine's cores.
    private func pool(_ dir: String, into report: Report) {
        var pooled = PluginIsolation.isolated
        pooled.children = 2
        guard let single = host(dir, isolation: .isolated, label: "pool-1"), let pair = host(dir, isolation: pooled, label: "pool-2"),
              let one = command(single), let two = command(pair) else { return }
        defer {
            single.shutdown()
            pair.shutdown()
        }
        func perCall(_ command: any Command) -> Double {
            let callers = 16, calls = 10
            return together(callers: callers) {
                for _ in 0..<calls { _ = try? command.run(arguments: ["serial-spin", "2"]) }
            } / 1_000 / Double(callers * calls)
        }
        var singles: [Double] = [], pairs: [Double] = []
        for _ in 0..<5 {
            singles.append(perCall(one))
            pairs.append(perCall(two))
        }
        report.add("CPU-bound calls one child runs one at a time, 16 threads, pool of 2, µs per call (wall)", unit: "µs", samples: pairs,
                   baselineName: "one child", baseline: singles, goal: .fasterAtLeast(ProcessInfo.processInfo.activeProcessorCount >= 2 ? 1.6 : 1))
    }

    /// Nanoseconds for `callers` threads, started together behind a barrier, to each run `body`.
    func together(callers: Int, _ body: @escaping @Sendable () -> Void) -> Double {
        let start = DispatchSemaphore(value: 0), done = DispatchGroup()
        for _ in 0..<callers {
            done.enter()
            Thread {
                start.wait()
                body()
                done.leave()
            }.start()
        }
        return timed {
            for _ in 0..<callers { start.signal() }
            done.wait()
        }
    }

    private func timed(_ body: () -> Void) -> Double {
        let start = Measure.now()
        body()
        return Double(Measure.now() - start)
    }

    /// A host on `dir` with the fixture, in process or isolated, started and called once.
    func host(_ dir: String, isolation: PluginIsolation, label: String? = nil) -> PluginHost? {
        let name = label ?? (isolation.sandbox != nil ? "sandboxed" : isolation.isolated ? "isolated" : "in-process")
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: dir + "/plugins", dataDirectory: dir + "/data", logSink: BenchSuite.quiet,
            cacheDirectory: dir + "/cache-\(name)")
        configuration.isolation.others = isolation
        configuration.isolation.restartBudget = RestartBudget(crashes: 1_000)
        let host = PluginHost(configuration: configuration)
        host.declare(Commands.self)
        // A row left out says why: a bench that skips silently hides a regression.
        do {
            try host.start()
            guard let command = command(host) else { throw BenchHostMissing(diagnostics: host.diagnostics.map(\.description)) }
            guard try command.run(arguments: ["echo", "x"]) == "x" else { throw BenchHostMissing(diagnostics: ["echo answered wrong"]) }
        } catch {
            print("  isolation bench: the \(name) host did not serve: \(error)")
            host.shutdown()
            return nil
        }
        return host
    }

    struct BenchHostMissing: Error, CustomStringConvertible {
        let diagnostics: [String]
        var description: String { "no fault command; diagnostics: \(diagnostics.joined(separator: "; "))" }
    }

    func command(_ host: PluginHost) -> (any Command)? {
        host.registry.handle(for: Commands.self).first
    }

    /// Microseconds per call of `fault echo PAYLOAD`, each timed alone.
    func timedCalls(_ host: PluginHost, payload: Int, count: Int) -> [Double] {
        guard let command = command(host) else { return [] }
        let arguments = ["echo", String(repeating: "x", count: payload)]
        for _ in 0..<min(count, 1_000) { _ = try? command.run(arguments: arguments) }
        return (0..<count).map { _ in
            let start = Measure.now()
            blackHole(try? command.run(arguments: arguments))
            return Double(Measure.now() - start) / 1_000
        }
    }

    /// The C ping-pong's round trips, µs.
    private func floor(bytes: Int, rounds: Int = IsolationBench.calls) -> [Double] {
        var samples = [Double](repeating: 0, count: rounds)
        guard bench_pipe_pingpong(Int32(rounds), bytes, &samples) == 0 else { return [] }
        return samples.map { $0 / 1_000 }
    }

    private func memcpyMicroseconds(bytes: Int) -> Double {
        let source = [UInt8](repeating: 1, count: bytes)
        var target = [UInt8](repeating: 0, count: bytes)
        let samples = Measure.samples(iterations: 200) { _ in
            target.withUnsafeMutableBytes { to in source.withUnsafeBytes { from in _ = memcpy(to.baseAddress!, from.baseAddress!, bytes) } }
            blackHole(target)
        }
        return Measure.median(samples) / 1_000
    }

    /// A crash, then the next answered call (a restart: spawn, handshake,
    /// load, init, activate, call), against a bare spawn of the same
    /// executable that exits at once; and the child's resident memory.
    private func startAndRestart(_ host: PluginHost, dir: String, into report: Report) {
        guard let command = command(host) else { return }
        report.begin("Isolated plugin's child (ms; KiB)")
        // Without a spare (spawned then), and from the spare a plugin keeps
        // once it has crashed (made ready before each crash here: in a
        // host, crashes are far apart).
        var restarts: (spawned: [Double], spared: [Double]) = ([], [])
        var spareKiB = 0
        for spared in [false, true] {
            host.keepsSpareChildren(spared, of: "fixture.isolation-faults")
            for _ in 0..<15 {
                // A spare started now (in a host: long before a crash), not
                // waited for: the restart includes whatever of its loading
                // is left (nothing tells when it is done; no sleep guesses).
                let spare = spared ? host.keepSpareChild(of: "fixture.isolation-faults") : nil
                if spared && spare == nil { break }
                _ = try? command.run(arguments: ["segv"])
                let start = Measure.now()
                guard (try? command.run(arguments: ["echo", "x"])) == "x" else { continue }
                let milliseconds = Double(Measure.now() - start) / 1_000_000
                // The spare, now the plugin's child, having answered.
                if let spare { spareKiB = residentKiB(of: spare) }
                if spared { restarts.spared.append(milliseconds) } else { restarts.spawned.append(milliseconds) }
            }
        }
        let spawns = (0..<15).map { _ in bareSpawn() }
        report.add("crash to the next answered call (restart, spawning)", unit: "ms", samples: restarts.spawned,
                   baselineName: "bare spawn of plugboard-child", baseline: spawns, goal: .ratioAtMost(1.3))
        report.add("crash to the next answered call (restart from the spare child)", unit: "ms", samples: restarts.spared,
                   baselineName: "bare spawn of plugboard-child", baseline: spawns, goal: .ratioAtMost(1.3))
        report.add("resident memory of a spare child (kept once a plugin crashed), once it answered", unit: "KiB", samples: [Double(spareKiB)])
        childMemory(dir, foundationChild: host.records.first(where: { $0.isolation?.pid != nil })?.isolation?.pid, into: report)
    }

    /// Milliseconds to spawn the child program beside this one (run by
    /// hand, it prints its usage and exits 64: its whole start, no plugin) and reap it.
    private func bareSpawn() -> Double {
        let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("plugboard-child").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let start = Measure.now()
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("plugboard-child"), nil]
        defer { argv.forEach { free($0) } }
        guard posix_spawn(&pid, program, &actions, nil, argv, environ) == 0 else { return 0 }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return Double(Measure.now() - start) / 1_000_000
    }

    func residentKiB(of pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    func percentile(_ samples: [Double], _ fraction: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }
}
