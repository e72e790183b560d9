import Foundation

/// What a command-line user feels: `plugboard run greet Ada` with 200 other
/// plugins installed (registry cache warm), from spawn to exit, against a C
/// program that `dlopen`s the Greeter file alone and calls its entry; and
/// against the same C program that then makes the durable write Greeter's
/// `greet` makes through its storage (two `fsync`s, whose time the disk decides).
struct CommandLineBench {
    /// Spawning, the template and the C baseline come from the startup benchmark.
    let startup: StartupBench
    /// The Greeter example's library.
    let greeter: String

    static let installed = 200
    static let runs = 7

    func run(into summary: Report) {
        StartupBench.inWorkFolder("cli", benchmark: "command-line") { work in try measure(in: work, into: summary) }
    }

    func measure(in work: URL, into summary: Report) throws {
        let image = try Data(contentsOf: URL(fileURLWithPath: startup.template))
        let offset = try StartupBench.placeholderOffset(in: image, file: startup.template)
        let directory = work.appendingPathComponent("plugins")
        _ = try startup.install(Self.installed, from: image, at: offset, in: directory)
        try FileManager.default.copyItem(atPath: greeter, toPath: directory.appendingPathComponent("libGreeter.so").path)
        let cache = try StartupBench.emptyDirectory(work.appendingPathComponent("cache"))
        let run = ["run", "greet", "Ada", "--plugins", directory.path, "--cache", cache, "--data", work.appendingPathComponent("data").path]
        // Untimed: fill the registry cache, and check the command answers.
        _ = try startup.spawn(startup.plugboard, run, in: work)
        let answer = String(decoding: try startup.spawn(startup.plugboard, run, in: work).stdout, as: UTF8.self)
        guard answer.contains("Ada") else { throw StartupBench.Failure("plugboard run greet Ada printed '\(answer)'") }
        let written = try StartupBench.emptyDirectory(work.appendingPathComponent("durable"))
        var ours = StartupBench.Series(), floor = StartupBench.Series(), floorWithWrite = StartupBench.Series()
        for _ in 0..<Self.runs {
            ours.add(try startup.spawn(startup.plugboard, run, in: work))
            floor.add(try startup.spawn(startup.baseline, ["--call", greeter], in: work))
            floorWithWrite.add(try startup.spawn(startup.baseline, ["--call", "--durable-write", written, greeter], in: work))
        }
        let ratio = ours.median / floor.median
        print("\nCommand line: plugboard run greet Ada with \(Self.installed + 1) plugins installed (warm), spawn to exit, \(Self.runs) runs")
        StartupBench.row("path", "figure (ms)", "baseline (ms)", "ratio", "goal", rss: "peak RSS (MiB)")
        StartupBench.row("C: dlopen Greeter, call its entry", floor.spread, rss: floor.peakMiB)
        StartupBench.row("plugboard run greet, \(Self.installed + 1) installed", ours.spread, StartupBench.ms(floor.median),
                         String(format: "%.2fx", ratio), "≤ 3.00x \(ratio <= 3 ? "ok" : "MISSED")", rss: ours.peakMiB)
        StartupBench.row("C: the same, then greet's durable write", floorWithWrite.spread, rss: floorWithWrite.peakMiB)
        StartupBench.row("plugboard run greet against it", ours.spread, StartupBench.ms(floorWithWrite.median),
                         String(format: "%.2fx", ours.median / floorWithWrite.median), rss: ours.peakMiB)
        print("  greet stores its count: a new file fsync'd, renamed, the folder fsync'd; the second floor makes the same write")
        summary.begin("Command line (\(Self.runs) runs)")
        summary.add("plugboard run greet, \(Self.installed + 1) installed, warm", unit: "ms", samples: ours.milliseconds,
                    baselineName: "C: dlopen that file, call its entry", baseline: floor.milliseconds, goal: .ratioAtMost(3))
        summary.add("plugboard run greet against C with greet's durable write", unit: "ms", samples: ours.milliseconds,
                    baselineName: "C: the same, then the write", baseline: floorWithWrite.milliseconds)
    }
}
