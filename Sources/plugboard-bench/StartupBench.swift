import Foundation
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// Startup as whole processes: `plugboard list --json` with 1, 50 and 200
/// installed plugins of distinct ids, cold (empty registry cache, files
/// scanned in parallel scanner processes) and warm (cache valid), beside the
/// C program that dlopens the same files. Each process is timed from spawn to
/// exit and reaped with `wait4` for its peak RSS.
struct StartupBench {
    /// The release `plugboard` tool.
    let plugboard: String
    /// `libBenchPlugin.so` from Tests/Fixtures: its id ends in "00000".
    let template: String
    /// `dlopen-baseline` (bench/dlopen_baseline.c).
    let baseline: String
    /// `spawn-measured` (bench/spawn_measured.c): each process is started
    /// from it, so that its peak RSS is its own. Spawned from this process,
    /// a child's `ru_maxrss` starts at this process's resident size.
    var spawner: String? = nil

    static let counts = [1, 50, 200]
    static let runs = 7
    /// Cold with the most plugins is the slowest case: fewer runs keep `make bench` short.
    static let coldLargestRuns = 3
    static let idPrefix = "bench.plugin.number."
    static let idPlaceholder = "00000"

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// One finished child process.
    struct ProcessRun {
        let milliseconds: Double
        /// `ru_maxrss` from `wait4`: the largest of the process and its reaped
        /// children (the scanners), not their sum.
        let peakKiB: Int
        let stdout: Data
    }

    /// Repeated runs of one command.
    struct Series {
        var milliseconds: [Double] = []
        var peakKiB: [Int] = []

        mutating func add(_ run: ProcessRun) {
            milliseconds.append(run.milliseconds)
            peakKiB.append(run.peakKiB)
        }

        var median: Double { Measure.median(milliseconds) }
        var spread: String { StartupBench.spread(milliseconds) }
        /// The largest peak over the runs.
        var peakMiB: String { String(format: "%.1f", Double(peakKiB.max() ?? 0) / 1024) }
    }

    /// Everything measured for one number of installed plugins.
    struct Case {
        let count: Int
        /// The C program, spawn to exit.
        var dlopen = Series()
        /// What the C program reports for its dlopen + dlsym loop alone (ns).
        var dlopenLoop: [Double] = []
        var cold = Series()
        var warm = Series()
        /// Scanner processes a cold run started, when `list --json` reports it.
        var scannerProcesses: Int?
    }

    func run(into summary: Report) {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-startup-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let cases = try measure(in: work)
            try? FileManager.default.removeItem(at: work)
            report(cases)
            summarize(cases, into: summary)
        } catch {
            // exit() skips defers: clean up first. Loud, because figures from a
            // broken setup (ids not distinct, cache not used) would mislead.
            try? FileManager.default.removeItem(at: work)
            FileHandle.standardError.write(Data("plugboard-bench: startup benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Runs `body` in a new folder under the temp directory, removed after;
    /// a failure ends the benchmarks, loudly (figures from a broken setup would mislead).
    static func inWorkFolder(_ label: String, benchmark: String, _ body: (URL) throws -> Void) {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-\(label)-\(UUID().uuidString)")
        // PLUGBOARD_BENCH_KEEP=1 leaves the folder for a profile of one command.
        let keep = ProcessInfo.processInfo.environment["PLUGBOARD_BENCH_KEEP"] == "1"
        defer { if keep { print("kept: \(work.path)") } else { try? FileManager.default.removeItem(at: work) } }
        do {
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            try body(work)
        } catch {
            try? FileManager.default.removeItem(at: work)  // exit() skips defers
            FileHandle.standardError.write(Data("plugboard-bench: \(benchmark) benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    }

    // MARK: - Measuring

    func measure(in work: URL) throws -> [Case] {
        let image: Data
        do {
            image = try Data(contentsOf: URL(fileURLWithPath: template))
        } catch {
            throw Failure("cannot read \(template) (run `make fixtures`): \(error)")
        }
        let offset = try Self.placeholderOffset(in: image, file: template)
        let data = work.appendingPathComponent("data").path
        var cases: [Case] = []
        for count in Self.counts {
            let directory = work.appendingPathComponent("plugins-\(count)")
            let files = try install(count, from: image, at: offset, in: directory)
            var result = Case(count: count)
            let warmCache = try Self.emptyDirectory(work.appendingPathComponent("cache-warm-\(count)"))
            // Not timed: fill the warm cache, checking what the cold run
            // scanned, then check that a warm run opens no plugin file.
            let fill = try list(directory, cache: warmCache, data: data, count: count, warm: false, in: work)
            result.scannerProcesses = fill.scannerProcesses
            _ = try list(directory, cache: warmCache, data: data, count: count, warm: true, in: work)
            let coldRuns = count == Self.counts.last ? Self.coldLargestRuns : Self.runs
            // Interleaved, so drift on a shared machine hits figures and baseline alike.
            for index in 0..<Self.runs {
                let c = try spawn(baseline, files, in: work)
                let text = String(decoding: c.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                guard let nanoseconds = Double(text) else {
                    throw Failure("\(baseline) printed '\(text)', not nanoseconds")
                }
                result.dlopen.add(c)
                result.dlopenLoop.append(nanoseconds)
                if index < coldRuns {
                    let cache = try Self.emptyDirectory(work.appendingPathComponent("cache-cold-\(count)-\(index)"))
                    // Timed: the text listing (a host's start and its table,
                    // without encoding N records as pretty JSON for a script).
                    result.cold.add(try spawn(plugboard, ["list", "--plugins", directory.path, "--cache", cache, "--data", data], in: work))
                    try? FileManager.default.removeItem(atPath: cache)
                }
                result.warm.add(try spawn(plugboard, ["list", "--plugins", directory.path, "--cache", warmCache, "--data", data], in: work))
            }
            // Up to 200 copies of the library: do not keep them for the next case.
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(atPath: warmCache)
            cases.append(result)
        }
        return cases
    }

    /// Where the five placeholder digits of the id are in the library; the
    /// id must occur exactly once, or the copies' ids would not be what we think.
    static func placeholderOffset(in image: Data, file: String, placeholder: String = idPlaceholder, prefix: String = idPrefix) throws -> Int {
        let pattern = Data((prefix + placeholder).utf8)
        var offsets: [Int] = []
        var from = image.startIndex
        while let range = image.range(of: pattern, in: from..<image.endIndex) {
            offsets.append(range.lowerBound)
            from = range.lowerBound + 1
        }
        guard offsets.count == 1 else {
            throw Failure(
                "\(file) holds \"\(prefix + placeholder)\" \(offsets.count) times, not once: "
                    + "cannot give its copies distinct ids (is the id still one literal longer than 15 bytes?)")
        }
        return offsets[0] + prefix.utf8.count
    }

    /// Writes copies 1...count of `image` into a new `directory` as
    /// `libBench00001.so`..., each with its number over the id's "00000".
    func install(_ count: Int, from image: Data, at offset: Int, in directory: URL) throws -> [String] {
        try Self.install(1...count, from: image, at: offset, in: directory)
    }

    /// Copies of `image` numbered `numbers` (written over its id's five
    /// placeholder digits at `offset`), as `libBenchNNNNN.so` in `directory`.
    static func install(_ numbers: ClosedRange<Int>, from image: Data, at offset: Int, in directory: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var bytes = image
        return try numbers.map { number in
            let digits = Array(Self.digits(number).utf8)
            bytes.replaceSubrange(offset..<offset + digits.count, with: digits)
            let file = directory.appendingPathComponent("libBench\(Self.digits(number)).so")
            try bytes.write(to: file)
            return file.path
        }
    }

    static func digits(_ number: Int) -> String { String(format: "%05d", number) }

    static func emptyDirectory(_ url: URL) throws -> String {
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    /// One `plugboard list --json`, checked: all `count` plugins available
    /// with the ids the copies were given; a warm run opened no plugin file.
    func list(_ directory: URL, cache: String, data: String, count: Int, warm: Bool, in work: URL) throws -> (run: ProcessRun, scannerProcesses: Int?) {
        let run = try spawn(plugboard, ["list", "--plugins", directory.path, "--cache", cache, "--data", data, "--json"], in: work)
        guard let document = (try? JSONSerialization.jsonObject(with: run.stdout)) as? [String: Any],
              let plugins = document["plugins"] as? [[String: Any]]
        else {
            throw Failure("plugboard list --json printed no plugin list")
        }
        let expected = Set((1...count).map { Self.idPrefix + Self.digits($0) })
        let available = Set(plugins.filter { $0["status"] as? String == "available" }.compactMap { $0["id"] as? String })
        guard plugins.count == count, available == expected else {
            let problems = plugins.filter { $0["status"] as? String != "available" }.prefix(3).map { plugin in
                "\(plugin["path"] as? String ?? "?"): \(plugin["status"] as? String ?? "?") \(plugin["reason"] as? String ?? "")"
            }
            throw Failure(
                "plugboard list found \(plugins.count) files, \(available.count) available with the expected ids, "
                    + "expected \(count) (\(Self.idPrefix)00001...): \(problems.joined(separator: "; "))")
        }
        // Checked when `list --json` reports discovery statistics.
        let discovery = document["discovery"] as? [String: Any]
        if warm, let read = discovery?["filesRead"] as? Int, read != 0 {
            throw Failure("a warm run opened \(read) of \(count) plugin files: the registry cache was not used")
        }
        if !warm, let scanned = discovery?["filesScanned"] as? Int, scanned != count {
            throw Failure("a cold run scanned \(scanned) of \(count) plugin files")
        }
        return (run, discovery?["scannerProcesses"] as? Int)
    }

    /// Runs `executable` to its end: stdin /dev/null, stdout and stderr to
    /// files in `work` (no pipe to drain while timing). Foundation's Process
    /// reaps its own children, so it cannot give the rusage: posix_spawn + wait4.
    func spawn(_ executable: String, _ arguments: [String], in work: URL) throws -> ProcessRun {
        let outPath = work.appendingPathComponent("stdout").path
        let errPath = work.appendingPathComponent("stderr").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let reportPath = work.appendingPathComponent("spawn-report").path
        unlink(reportPath)  // never the last process's figures
        let command = spawner.map { [$0, reportPath, executable] } ?? [executable]
        let argv: [UnsafeMutablePointer<CChar>?] = (command + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }

        var pid: pid_t = 0
        let start = Measure.now()
        let error = posix_spawn(&pid, command[0], &actions, nil, argv, envp)
        guard error == 0 else {
            throw Failure("cannot start \(command[0]): \(String(cString: strerror(error)))")
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw Failure("wait4 on \(command[0]): \(String(cString: strerror(errno)))") }
        }
        var elapsed = Double(Measure.now() - start) / 1e6
        var peakKiB = usage.ru_maxrss
        if spawner != nil {
            // The spawner's own report: the program's time and peak, not the spawner's.
            let errors = FileManager.default.contents(atPath: errPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
            guard status == 0, let text = FileManager.default.contents(atPath: reportPath).map({ String(decoding: $0, as: UTF8.self) }) else {
                throw Failure("\(command[0]) could not run \(executable) (wait status \(status)): \(errors.suffix(2000))")
            }
            let fields = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
            guard fields.count == 3 else { throw Failure("\(command[0]) wrote '\(text)', not three numbers") }
            elapsed = Double(fields[0]) / 1e6
            peakKiB = fields[1]
            status = Int32(fields[2])
        }

        let killer = WaitStatus.signal(status), exitStatus = WaitStatus.exitCode(status)
        guard killer == 0, exitStatus == 0 else {
            let errors = FileManager.default.contents(atPath: errPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
            let ending = killer != 0 ? "was killed by signal \(killer)" : "exited with status \(exitStatus)"
            throw Failure("\(([executable] + arguments).prefix(6).joined(separator: " ")) ... \(ending):\n\(errors.suffix(2000))")
        }
        return ProcessRun(
            milliseconds: elapsed, peakKiB: peakKiB,
            stdout: FileManager.default.contents(atPath: outPath) ?? Data())
    }

    // MARK: - Report

    /// Where the peak RSS figures come from, for the report.
    var memorySource: String {
        spawner != nil
            ? "each started from spawn-measured, so its own"
            : "spawned from the bench itself, so at least the bench's own resident size (pass --spawner)"
    }

    func report(_ cases: [Case]) {
        guard let smallest = cases.first, let largest = cases.last, largest.count > smallest.count else { return }
        var missed = 0
        func goal(_ ratio: Double, below limit: Double, strictly: Bool) -> String {
            let met = strictly ? ratio < limit : ratio <= limit
            if !met { missed += 1 }
            return "\(strictly ? "<" : "≤") \(String(format: "%.2fx", limit)) \(met ? "ok" : "MISSED")"
        }
        func ratio(_ value: Double) -> String { String(format: "%.2fx", value) }
        func plugins(_ count: Int, _ word: String) -> String { count == 1 ? "1 \(word)" : "\(count) \(word)s" }

        print("\nStartup, whole process: plugboard list on N installed plugins with distinct ids")
        print("  (each case first checked untimed with --json: all available with their ids, cold scans all, warm opens none)")
        print("  cold: empty registry cache, files scanned in parallel scanner processes; warm: cache valid")
        print("  baseline: the C program dlopen-ing the same files (linked to libPlugboard.so), spawn to exit")
        print("  median of \(Self.runs) runs (cold \(largest.count): \(Self.coldLargestRuns)), min–max in brackets")
        Self.row("path", "figure (ms)", "baseline (ms)", "ratio", "goal", rss: "peak RSS (MiB)")
        for c in cases {
            Self.row("C dlopen-baseline, \(plugins(c.count, "file"))", c.dlopen.spread, rss: c.dlopen.peakMiB)
        }
        for c in cases {
            Self.row("startup cold, \(plugins(c.count, "plugin"))", c.cold.spread, Self.ms(c.dlopen.median),
                     ratio(c.cold.median / c.dlopen.median), rss: c.cold.peakMiB)
        }
        for c in cases {
            let r = c.warm.median / c.dlopen.median
            // Goal: with the most plugins, faster than the C program loading them all.
            Self.row("startup warm, \(plugins(c.count, "plugin"))", c.warm.spread, Self.ms(c.dlopen.median), ratio(r),
                     c.count == largest.count ? goal(r, below: 1, strictly: true) : "", rss: c.warm.peakMiB)
        }
        let growth = largest.warm.median / smallest.warm.median
        Self.row("startup warm, \(largest.count) vs warm, \(smallest.count)", Self.ms(largest.warm.median),
                 Self.ms(smallest.warm.median), ratio(growth), goal(growth, below: 1.5, strictly: false), rss: "—")
        let perFile = largest.dlopenLoop.map { $0 / 1e6 / Double(largest.count) }
        Self.row("C dlopen per file (\(largest.count))", Self.spread(perFile), rss: "—")
        let perPlugin = (largest.cold.median - smallest.cold.median) / Double(largest.count - smallest.count)
        let dlopenPerFile = Measure.median(perFile)
        Self.row("cold scan per plugin (\(largest.count))", Self.ms(perPlugin), Self.ms(dlopenPerFile),
                 ratio(perPlugin / dlopenPerFile), rss: "—")

        print("  cold scan per plugin = (cold \(largest.count) − cold \(smallest.count)) / \(largest.count - smallest.count), medians;"
              + " C dlopen per file = the C program's own dlopen + dlsym loop time / \(largest.count)")
        print("  peak RSS = largest ru_maxrss of the runs (wait4): the process or its biggest scanner child, not their sum; \(memorySource)")
        if let processes = largest.scannerProcesses {
            print("  a cold run with \(largest.count) plugins started \(processes) scanner processes")
        }
        print(missed == 0 ? "  startup goals: all met" : "  startup goals: \(missed) MISSED")
    }

    /// The startup goals, as rows of the summary table.
    func summarize(_ cases: [Case], into summary: Report) {
        guard let smallest = cases.first, let largest = cases.last, largest.count > smallest.count else { return }
        summary.begin("Startup: plugboard list, whole process (\(Self.runs) runs)")
        summary.add("startup warm, \(largest.count) plugins", unit: "ms", samples: largest.warm.milliseconds,
                    baselineName: "C dlopen of the files", baseline: largest.dlopen.milliseconds, goal: .ratioBelow(1))
        summary.add("startup warm, \(largest.count) vs 1 plugin", unit: "ms", samples: largest.warm.milliseconds,
                    baselineName: "warm, 1 plugin", baseline: smallest.warm.milliseconds, goal: .ratioAtMost(1.5))
        let perFile = largest.dlopenLoop.map { $0 / 1e6 / Double(largest.count) }
        let perPlugin = (largest.cold.median - smallest.cold.median) / Double(largest.count - smallest.count)
        summary.add("cold scan per plugin", unit: "ms", samples: [perPlugin], baselineName: "C dlopen per file", baseline: perFile)
    }

    static func row(_ path: String, _ figure: String, _ baseline: String = "", _ ratio: String = "", _ goal: String = "", rss: String = "") {
        let cells = [(path, 40), (figure, 26), (baseline, 15), (ratio, 9), (goal, 17)]
        print("  " + cells.map { $0.0.padding(toLength: $0.1, withPad: " ", startingAt: 0) }.joined() + rss)
    }

    /// Milliseconds with about three significant digits.
    static func ms(_ value: Double) -> String {
        switch value {
        case 100...: String(format: "%.0f", value)
        case 10...: String(format: "%.1f", value)
        case 1...: String(format: "%.2f", value)
        default: String(format: "%.3f", value)
        }
    }

    /// "median (min–max)" in milliseconds.
    static func spread(_ values: [Double]) -> String {
        "\(ms(Measure.median(values))) (\(ms(values.min() ?? 0))–\(ms(values.max() ?? 0)))"
    }
}
