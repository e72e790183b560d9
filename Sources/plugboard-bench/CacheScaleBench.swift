import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Warm starts that do not pay for what else is installed: `plugboard list`
/// of one plugin with a registry cache that also holds 10,000 entries of
/// other folders (2,000 plugins, and four folders of hard links to them),
/// against the same start with a cache of its own; and 2,000 installed
/// plugins warm against the C program that dlopens them, with the host's
/// peak resident memory cold and warm.
struct CacheScaleBench {
    /// Spawning, the template and the C baseline come from the startup benchmark.
    let startup: StartupBench

    static let count = 2_000
    static let aliases = 4
    static let runs = 7

    func run(into summary: Report) {
        StartupBench.inWorkFolder("cache", benchmark: "cache-scale") { work in try measure(in: work, into: summary) }
    }

    func measure(in work: URL, into summary: Report) throws {
        let image = try Data(contentsOf: URL(fileURLWithPath: startup.template))
        let offset = try StartupBench.placeholderOffset(in: image, file: startup.template)
        let many = work.appendingPathComponent("plugins-\(Self.count)")
        let files = try startup.install(Self.count, from: image, at: offset, in: many)
        let one = work.appendingPathComponent("plugins-1")
        _ = try startup.install(1, from: image, at: offset, in: one)
        let data = work.appendingPathComponent("data").path
        let shared = try StartupBench.emptyDirectory(work.appendingPathComponent("cache-shared"))
        let own = try StartupBench.emptyDirectory(work.appendingPathComponent("cache-own"))
        // Four folders of hard links to the 2,000 files, made first: a new
        // link changes every name's status-change time, so each entry made
        // before it would be stale.
        var folders: [URL] = []
        for alias in 1...Self.aliases {
            let folder = work.appendingPathComponent("alias-\(alias)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for file in files { try FileManager.default.linkItem(atPath: file, toPath: folder.appendingPathComponent(URL(fileURLWithPath: file).lastPathComponent).path) }
            folders.append(folder)
        }
        // Untimed but for the first cold run's memory: fill the shared cache.
        let cold = try startup.spawn(startup.plugboard, ["list", "--plugins", many.path, "--cache", shared, "--data", data], in: work)
        for folder in folders { _ = try startup.spawn(startup.plugboard, ["list", "--plugins", folder.path, "--cache", shared, "--data", data], in: work) }
        _ = try startup.spawn(startup.plugboard, ["list", "--plugins", many.path, "--cache", shared, "--data", data], in: work)
        for cache in [shared, own] { _ = try startup.spawn(startup.plugboard, ["list", "--plugins", one.path, "--cache", cache, "--data", data], in: work) }
        // Checked: the shared cache holds every entry, and a warm start opens no file.
        let check = try startup.spawn(startup.plugboard, ["list", "--json", "--plugins", one.path, "--cache", shared, "--data", data], in: work)
        let discovery = ((try? JSONSerialization.jsonObject(with: check.stdout)) as? [String: Any])?["discovery"] as? [String: Any]
        guard discovery?["cacheHits"] as? Int == 1, discovery?["filesRead"] as? Int == 0 else {
            throw StartupBench.Failure("a warm start of one plugin with the shared cache was not warm: \(discovery ?? [:])")
        }
        var alone = StartupBench.Series(), crowded = StartupBench.Series()
        var warmMany = StartupBench.Series(), dlopen = StartupBench.Series()
        for _ in 0..<Self.runs {
            alone.add(try startup.spawn(startup.plugboard, ["list", "--plugins", one.path, "--cache", own, "--data", data], in: work))
            crowded.add(try startup.spawn(startup.plugboard, ["list", "--plugins", one.path, "--cache", shared, "--data", data], in: work))
            warmMany.add(try startup.spawn(startup.plugboard, ["list", "--plugins", many.path, "--cache", shared, "--data", data], in: work))
            dlopen.add(try startup.spawn(startup.baseline, files, in: work))
        }
        let entries = Self.count * (Self.aliases + 1) + 1
        let crowdedRatio = crowded.median / alone.median, manyRatio = warmMany.median / dlopen.median
        print("\nCache scale: warm starts against what else the registry cache holds (median of \(Self.runs) interleaved runs)")
        StartupBench.row("path", "figure (ms)", "baseline (ms)", "ratio", "goal", rss: "peak RSS (MiB)")
        StartupBench.row("warm, 1 plugin, own cache", alone.spread, rss: alone.peakMiB)
        StartupBench.row("warm, 1 plugin, cache of \(entries) entries", crowded.spread, StartupBench.ms(alone.median),
                         String(format: "%.2fx", crowdedRatio), "≤ 1.20x \(crowdedRatio <= 1.2 ? "ok" : "MISSED")", rss: crowded.peakMiB)
        StartupBench.row("C dlopen-baseline, \(Self.count) files", dlopen.spread, rss: dlopen.peakMiB)
        StartupBench.row("startup warm, \(Self.count) plugins", warmMany.spread, StartupBench.ms(dlopen.median),
                         String(format: "%.2fx", manyRatio), "≤ 0.50x \(manyRatio <= 0.5 ? "ok" : "MISSED")", rss: warmMany.peakMiB)
        StartupBench.row("startup cold, \(Self.count) plugins (one run)", StartupBench.ms(cold.milliseconds), rss: String(format: "%.1f", Double(cold.peakKiB) / 1024))
        print("  peak RSS = ru_maxrss (wait4): the host or its biggest scanner child, \(startup.memorySource); goal for a cold start of \(Self.count): ≤ 64 MiB")
        summary.begin("Cache scale (\(Self.runs) runs)")
        summary.add("warm, 1 plugin, cache of \(entries) entries", unit: "ms", samples: crowded.milliseconds,
                    baselineName: "warm, 1 plugin, own cache", baseline: alone.milliseconds, goal: .ratioAtMost(1.2))
        summary.add("startup warm, \(Self.count) plugins", unit: "ms", samples: warmMany.milliseconds,
                    baselineName: "C dlopen of the files", baseline: dlopen.milliseconds, goal: .ratioAtMost(0.5))
        summary.add("peak RSS, cold start of \(Self.count) plugins", unit: "MiB", samples: [Double(cold.peakKiB) / 1024], goal: .below(64))
        summary.add("peak RSS, warm start of \(Self.count) plugins", unit: "MiB", samples: warmMany.peakKiB.map { Double($0) / 1024 })
    }
}
