import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost

/// Hot-reload costs: the host's share (verify + load + switch, no compiler)
/// and a full save-to-live loop through `plugboard dev` on the Greeter example.
struct ReloadBench {
    let plugboard: String
    let versions: [String]
    let examplePackage: String
    let sdk: String
    let baseline: URL

    func run(into report: Report) {
        hostSide(report)
        memory(report)
        saveToLive(report)
    }

    /// 20 reloads alternating two builds, verified as the dev loop does
    /// (load and activate in a scanner process), against spawning `/bin/true`.
    func hostSide(_ report: Report) {
        report.begin("Hot reload, host side (20 reloads 50 ms apart, verified with load and activate in a scanner)")
        let host = PluginHost(configuration: .with(logSink: BenchSuite.quiet))
        host.declareDemoExtensionPoints()
        guard host.load(reloadable: versions[0]).status == .active else {
            print("  reload benchmark: first load failed")
            return
        }
        var verify: [Double] = [], load: [Double] = [], switching: [Double] = []
        var admission: [Double] = [], waiting: [Double] = [], inScanner: [Double] = []
        for index in 0..<20 {
            // Untimed: the pause a build makes between two reloads of a dev
            // loop, in which the spare scanner process gets ready: waited
            // for until it said hello.
            host.awaitSpareScanner()
            let outcome = host.reload("fixture.reloadable", from: versions[(index + 1) % 2], verification: .loadAndActivate)
            guard outcome.result == .reloaded else {
                print("  reload benchmark: \(outcome.error?.message ?? "failed")")
                return
            }
            verify.append(outcome.timings.verify)
            admission.append(outcome.timings.verifyAdmission)
            waiting.append(outcome.timings.verifyWait)
            inScanner.append(outcome.timings.verifyInScanner)
            load.append(outcome.timings.load)
            switching.append(outcome.timings.switch)
        }
        host.shutdown()
        let cold = (0..<9).compactMap { _ in runNumbers(baseline, [versions[1]])?.first.map { $0 / 1e6 } }
        let spawn = (0..<9).compactMap { _ in Spawn.trueProcess() }
        let scanner = (0..<9).compactMap { _ in Spawn.idleScanner() }
        // The same work with nothing of Plugboard's: the bare harness loads and
        // activates the build in a fresh process of this executable (its
        // start not counted), and with a private copy made first.
        let me = BenchSuite.executable
        func harness(_ options: [String]) -> [Double] {
            (0..<9).compactMap { _ in runNumbers(me, ["bare-activate"] + options + [versions[1]])?.first.map { $0 / 1e6 } }
        }
        let bare = harness([]), bareWithCopy = harness(["--private-copy"])
        report.add("reload: verify in a scanner (load + activate)", unit: "ms", samples: verify,
                   baselineName: "spawn /bin/true", baseline: spawn, goal: .ratioAtMost(3))
        // Where verify goes: the host's admission, the wait for a ready
        // scanner (none when the spare is ready), the build's load and
        // activation in it (its end is not waited for).
        for (name, samples) in [("  of which: admission in the host", admission), ("  of which: waiting for a ready scanner", waiting)] {
            report.add(name, unit: "ms", samples: samples, baselineName: "spawn /bin/true", baseline: spawn)
        }
        report.add("  of which: scanner loads and activates", unit: "ms", samples: inScanner,
                   baselineName: "bare harness", baseline: bare)
        report.add("  not in verify: idle scanner start", unit: "ms", samples: scanner, baselineName: "spawn /bin/true", baseline: spawn)
        // What bounds verify: copying the build and loading and activating
        // it in another process, with no checks and no protocol, against the
        // same spawn.
        report.add("  floor: bare harness copies, loads, activates", unit: "ms", samples: bareWithCopy,
                   baselineName: "spawn /bin/true", baseline: spawn)
        report.add("reload: load (copy, checks, dlopen, init)", unit: "ms", samples: load,
                   baselineName: "C dlopen+dlsym, cold", baseline: cold)
        report.add("reload: switch (registry, events, routes)", unit: "ms", samples: switching)
    }

    /// Resident memory over 1,000 reloads, in a child process of its own.
    func memory(_ report: Report) {
        report.begin("Memory over 1,000 reloads (one process, resident KiB)")
        let me = BenchSuite.executable
        guard let numbers = runNumbers(me, ["reload-memory", versions[0], versions[1]]), numbers.count == 4 else {
            print("  reload memory benchmark failed")
            return
        }
        // numbers: resident after the first load, after 100, after 1,000 reloads; mapped bytes per generation.
        let perGeneration = (numbers[2] - numbers[1]) / 900
        report.add("resident memory per reload generation", unit: "KiB", samples: [perGeneration],
                   note: String(format: "mapped per generation (the image, never unmapped): %.0f KiB", numbers[3] / 1024))
        report.add("resident growth over 1,000 reloads", unit: "KiB", samples: [numbers[2] - numbers[0]])
    }

    /// In the child: prints resident KiB after the first load, after 100 and
    /// after 1,000 reloads, and the median mapped bytes a generation added.
    static func printReloadMemory(_ versions: [String]) {
        let host = PluginHost(configuration: .with(logSink: BenchSuite.quiet))
        host.declareDemoExtensionPoints()
        guard host.load(reloadable: versions[0]).status == .active else { exit(1) }
        var checkpoints = [Memory.residentKiB()]
        var mapped: [Double] = []
        for index in 0..<1_000 {
            let outcome = host.reload("fixture.reloadable", from: versions[(index + 1) % 2])
            guard outcome.result == .reloaded else { exit(1) }
            mapped.append(Double(outcome.addedMemory))
            if index == 99 || index == 999 { checkpoints.append(Memory.residentKiB()) }
        }
        host.shutdown()
        print(checkpoints[0], checkpoints[1], checkpoints[2], Measure.median(mapped))
        exit(0)
    }

    /// Edits the Greeter example under `plugboard dev --json` and times save
    /// → `reloaded`, split into the compiler's share and Plugboard's.
    func saveToLive(_ report: Report) {
        report.begin("Save to live: the Greeter example under plugboard dev (5 edits)")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-dev-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        let package = work.appendingPathComponent("Greeter")
        do {
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: examplePackage, toPath: package.path)
            try? FileManager.default.removeItem(at: package.appendingPathComponent(".build"))
            let manifest = package.appendingPathComponent("Package.swift")
            try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "../../SDK", with: sdk)
                .write(to: manifest, atomically: true, encoding: .utf8)
        } catch {
            print("  save-to-live benchmark: cannot copy the example: \(error)")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: plugboard)
        process.arguments = ["dev", package.path, "--json", "--data", work.appendingPathComponent("data").path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return }
        defer { process.terminate(); process.waitUntilExit() }
        let lines = LineStream(out.fileHandleForReading)
        guard lines.next(event: "ready") != nil else {
            print("  save-to-live benchmark: dev session did not start")
            return
        }
        let source = package.appendingPathComponent("Sources/Greeter/Greeter.swift")
        var totals: [Double] = [], builds: [Double] = [], ours: [Double] = []
        var parts: [String: [Double]] = [:]
        for round in 0..<5 {
            guard let text = try? String(contentsOf: source, encoding: .utf8) else { return }
            let start = Measure.now()
            try? text.replacingOccurrences(of: "\"Hello", with: "\"Hello\(round)").write(to: source, atomically: true, encoding: .utf8)
            guard let event = lines.next(event: "reloaded"), let ms = event["ms"] as? [String: Double] else {
                print("  save-to-live benchmark: no reload")
                return
            }
            let total = Double(Measure.now() - start) / 1e6
            totals.append(total)
            builds.append(ms["build"] ?? 0)
            ours.append(total - (ms["build"] ?? 0))
            for key in ["detect", "verify", "load", "switch"] { parts[key, default: []].append(ms[key] ?? 0) }
        }
        let split = ["detect", "verify", "load", "switch"].map { key in
            String(format: "%@ %.1f ms", key == "detect" ? "watcher" : key, Measure.median(parts[key] ?? [0]))
        }
        report.add("save-to-live, Plugboard's share", unit: "ms", samples: ours,
                   baselineName: "swift build", baseline: builds, goal: .below(50),
                   note: "split (medians): " + split.joined(separator: ", ")
                       + String(format: "; whole save-to-live %.0f ms", Measure.median(totals)))
    }
}

/// Process starts, timed from spawn to the point that matters.
enum Spawn {
    /// `/bin/true` with `posix_spawn`, to its exit (ms).
    static func trueProcess() -> Double? {
        var pid: pid_t = 0
        var arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { arguments.forEach { free($0) } }
        let start = Measure.now()
        guard posix_spawn(&pid, "/bin/true", nil, nil, &arguments, environ) == 0 else { return nil }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return Double(Measure.now() - start) / 1e6
    }

    /// This executable as a scanner child, to its `hello` (ms): the fixed
    /// cost of a verification without a spare process ready.
    static func idleScanner() -> Double? {
        let executable = BenchSuite.executable.path
        let start = Measure.now()
        guard let scanner = try? StartedScanner.start(executable) else { return nil }
        var byte: UInt8 = 0
        while read(scanner.channel, &byte, 1) == 1, byte != 0x0A {}
        let elapsed = Double(Measure.now() - start) / 1e6
        scanner.close()
        var status: Int32 = 0
        waitpid(scanner.pid, &status, 0)
        return elapsed
    }
}

/// JSON lines from a child's stdout.
final class LineStream {
    private let handle: FileHandle
    private var buffer = Data()

    init(_ handle: FileHandle) { self.handle = handle }

    /// The next event named `name` (others are skipped); nil at end of stream.
    func next(event name: String) -> [String: Any]? {
        while true {
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                if let event = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], event["event"] as? String == name {
                    return event
                }
            }
            let data = handle.availableData
            if data.isEmpty { return nil }
            buffer.append(data)
        }
    }
}
