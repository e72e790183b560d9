import Foundation
import Synchronization
import Plugboard
import PlugboardHost

/// Start lines (docs/ARCHITECTURE.md): 64 first lookups, awaited from 64
/// tasks at once, of 64 different pending points, each provided by a plugin
/// whose `init` takes 20 ms (libBenchSlowStart.so, copied with 64 ids).
/// Side by side they take about one `init`; one after another, the sum.
/// The baseline is one first lookup of one such plugin, in the same run.
struct ParallelStartBench {
    /// `libBenchSlowStart.so`: its plugin id and point id end in "00000".
    let template: String

    static let count = 64
    static let runs = 3
    static let idPrefixes = ["bench.slow.plugin.number.", "bench.slow.point.number."]

    func run(into summary: Report) {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-parallel-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        do {
            let plugins = try install(in: work)
            var one: [Double] = [], together: [Double] = [], sequential: [Double] = []
            for run in 0..<Self.runs {
                one.append(try time(in: work, run: "one-\(run)", plugins: plugins) { lookups, host in await lookups[0](host) })
                together.append(try time(in: work, run: "together-\(run)", plugins: plugins) { lookups, host in
                    await withTaskGroup(of: Void.self) { group in
                        for lookup in lookups { group.addTask { await lookup(host) } }
                    }
                })
                sequential.append(try time(in: work, run: "sequential-\(run)", plugins: plugins) { lookups, host in
                    for lookup in lookups { await lookup(host) }
                })
            }
            report(one: one, together: together, sequential: sequential, into: summary)
        } catch {
            FileHandle.standardError.write(Data("plugboard-bench: parallel start benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Copies 1...count of the template, each with its number over both ids' placeholders.
    func install(in work: URL) throws -> URL {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: template))
        let offsets = try Self.idPrefixes.map { prefix in
            try StartupBench.placeholderOffset(in: bytes, file: template, prefix: prefix)
        }
        let plugins = work.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        for number in 1...Self.count {
            for offset in offsets { DependencyBench.write(number, at: offset, in: &bytes) }
            try bytes.write(to: plugins.appendingPathComponent("libSlow\(StartupBench.digits(number)).so"))
        }
        return plugins
    }

    /// Seconds `body` takes on a host that started (discovered, untimed) the
    /// installed plugins, with every point declared; checks all 64 started
    /// when `body` asked for all.
    func time(
        in work: URL, run: String, plugins: URL,
        _ body: @escaping @Sendable ([@Sendable (PluginHost) async -> Void], PluginHost) async -> Void
    ) throws -> Double {
        let host = PluginHost(configuration: .with(
            pluginsDirectory: plugins.path, dataDirectory: work.appendingPathComponent("data-\(run)").path,
            logSink: BenchSuite.quiet, cacheDirectory: work.appendingPathComponent("cache").path))
        defer { host.shutdown() }
        var lookups: [@Sendable (PluginHost) async -> Void] = []
        SlowPoints.collect(Next<Zero>.self, Self.count, into: &lookups, declaring: host)
        let records = try host.start()
        guard records.count == Self.count, records.allSatisfy({ $0.status == .available }) else {
            throw StartupBench.Failure("\(records.filter { $0.status != .available }.map { "\($0.path) \($0.status.rawValue)" }) of \(records.count) plugins not available")
        }
        let done = DispatchSemaphore(value: 0)
        let clock = ContinuousClock()
        let elapsed = Mutex<Duration>(.zero)
        Task.detached {
            let took = await clock.measure { await body(lookups, host) }
            elapsed.withLock { $0 = took }
            done.signal()
        }
        done.wait()
        return elapsed.withLock { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
    }

    func report(one: [Double], together: [Double], sequential: [Double], into summary: Report) {
        let ms = { (samples: [Double]) in samples.map { $0 * 1000 } }
        let (first, all, serial) = (Measure.median(ms(one)), Measure.median(ms(together)), Measure.median(ms(sequential)))
        let faster = serial / all
        print("\nStart lines: \(Self.count) first lookups (awaited) of \(Self.count) different points, each plugin's init taking 20 ms")
        print("  median of \(Self.runs) runs. Side by side the inits overlap; admission, dlopen (glibc serialises it) and")
        print("  each start's registry update do not, so 64 at once take one init plus 63 of those, not 64 inits")
        StartupBench.row("path", "figure (ms)", "baseline (ms)", "ratio", "goal", rss: "")
        StartupBench.row("one first lookup (one init)", String(format: "%.1f", first), rss: "")
        StartupBench.row("\(Self.count) one after another (the sum)", String(format: "%.1f", serial), String(format: "%.1f", first),
                         String(format: "%.1fx", serial / first), rss: "")
        StartupBench.row("\(Self.count) at once, from tasks", String(format: "%.1f", all), String(format: "%.1f", serial),
                         String(format: "%.1fx", faster), "≥ 10x faster \(faster >= 10 ? "ok" : "MISSED")", rss: "")
        summary.begin("Start lines: \(Self.count) first lookups of different points, 20 ms inits (\(Self.runs) runs)")
        summary.add("\(Self.count) first lookups at once (tasks)", unit: "ms", samples: ms(together),
                    baselineName: "the same one after another", baseline: ms(sequential), goal: .fasterAtLeast(10),
                    note: "one first lookup: \(String(format: "%.1f", first)) ms")
    }
}

/// 64 extension point types, one per copy's point id, made by nesting a
/// generic (the bench cannot write 64 declarations by hand and stay readable).
protocol SlowNumber: SendableMetatype { static var number: Int { get } }
enum Zero: SlowNumber { static var number: Int { 0 } }
enum Next<Previous: SlowNumber>: SlowNumber { static var number: Int { Previous.number + 1 } }

enum SlowPoint<Number: SlowNumber>: ExtensionPoint {
    typealias Provider = any Command
    static var interface: Interface {
        Interface(id: "bench.slow.point.number." + StartupBench.digits(Number.number), version: SemanticVersion(1, 0))
    }
}

enum SlowPoints {
    /// Declares points `Number`...`Number + count - 1` in `host`, and the first lookup of each.
    static func collect<Number: SlowNumber>(
        _ number: Number.Type, _ count: Int, into lookups: inout [@Sendable (PluginHost) async -> Void], declaring host: PluginHost
    ) {
        host.declare(SlowPoint<Number>.self)
        lookups.append { host in
            let found = await host.registry.activatedProviders(of: SlowPoint<Number>.self)
            precondition(found.count == 1, "point \(Number.number): \(found.count) providers")
        }
        if count > 1 { collect(Next<Number>.self, count - 1, into: &lookups, declaring: host) }
    }
}
