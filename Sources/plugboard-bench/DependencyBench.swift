import Foundation

/// Dependency resolution at startup: `plugboard list` (a warm start: the
/// registry cache valid, every requirement checked) on 201 installed plugins
/// that each require three others, beside the same 201 plugins requiring
/// nothing. The difference is what resolution costs.
struct DependencyBench {
    /// Spawning, the template id and the reaping come from the startup benchmark.
    let startup: StartupBench
    /// `libBenchDepPlugin.so` from Tests/Fixtures: id "...00000", requires "...9999a", "...9999b", "...9999c".
    let dependent: String

    static let count = 200
    static let runs = 7
    static let requirementPlaceholders = ["9999a", "9999b", "9999c"]

    func run(into summary: Report) {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-dependencies-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let (plain, withDependencies) = try measure(in: work)
            try? FileManager.default.removeItem(at: work)
            report(plain: plain, withDependencies: withDependencies, into: summary)
        } catch {
            try? FileManager.default.removeItem(at: work)
            FileHandle.standardError.write(Data("plugboard-bench: dependency benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    }

    func measure(in work: URL) throws -> (plain: StartupBench.Series, withDependencies: StartupBench.Series) {
        let template = try Data(contentsOf: URL(fileURLWithPath: startup.template))
        let image = try Data(contentsOf: URL(fileURLWithPath: dependent))
        let idOffset = try StartupBench.placeholderOffset(in: template, file: startup.template)
        let offsets = try ([StartupBench.idPlaceholder] + Self.requirementPlaceholders).map {
            try StartupBench.placeholderOffset(in: image, file: dependent, placeholder: $0)
        }
        let data = work.appendingPathComponent("data").path
        // The same ids in both folders: 0 (the template as it is, requiring
        // nothing) to 200; with dependencies, plugin n requires n-1, n-2 and
        // n-3 (0 at least), so every plugin has three requirements and the
        // order is a chain 200 deep.
        let plain = work.appendingPathComponent("plain")
        let dependents = work.appendingPathComponent("dependents")
        for folder in [plain, dependents] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        try template.write(to: plain.appendingPathComponent("libBench00000.so"))
        try template.write(to: dependents.appendingPathComponent("libBench00000.so"))
        var plainBytes = template
        var dependentBytes = image
        for number in 1...Self.count {
            let name = "libBench\(StartupBench.digits(number)).so"
            Self.write(number, at: idOffset, in: &plainBytes)
            try plainBytes.write(to: plain.appendingPathComponent(name))
            for (offset, value) in zip(offsets, [number, number - 1, number - 2, number - 3]) { Self.write(max(value, 0), at: offset, in: &dependentBytes) }
            try dependentBytes.write(to: dependents.appendingPathComponent(name))
        }
        var series = (plain: StartupBench.Series(), withDependencies: StartupBench.Series())
        var caches: [String] = []
        for folder in [plain, dependents] {
            let cache = try StartupBench.emptyDirectory(work.appendingPathComponent("cache-\(folder.lastPathComponent)"))
            caches.append(cache)
            // Untimed: fill the cache, then check every plugin is available.
            _ = try startup.spawn(startup.plugboard, ["list", "--plugins", folder.path, "--cache", cache, "--data", data], in: work)
            let check = try startup.spawn(startup.plugboard, ["list", "--json", "--plugins", folder.path, "--cache", cache, "--data", data], in: work)
            let document = (try? JSONSerialization.jsonObject(with: check.stdout)) as? [String: Any]
            let plugins = document?["plugins"] as? [[String: Any]] ?? []
            let available = plugins.filter { $0["status"] as? String == "available" }.count
            let required = plugins.reduce(0) { $0 + (($1["requires"] as? [Any])?.count ?? 0) }
            let expectedRequirements = folder == dependents ? 3 * Self.count : 0
            guard available == Self.count + 1, required == expectedRequirements else {
                throw StartupBench.Failure("\(folder.lastPathComponent): \(available) of \(Self.count + 1) available, \(required) requirements, expected \(expectedRequirements)")
            }
        }
        // Interleaved, so drift on a shared machine hits both alike.
        for _ in 0..<Self.runs {
            series.plain.add(try startup.spawn(startup.plugboard, ["list", "--plugins", plain.path, "--cache", caches[0], "--data", data], in: work))
            series.withDependencies.add(try startup.spawn(startup.plugboard, ["list", "--plugins", dependents.path, "--cache", caches[1], "--data", data], in: work))
        }
        return series
    }

    static func write(_ number: Int, at offset: Int, in bytes: inout Data) {
        let digits = Array(StartupBench.digits(number).utf8)
        bytes.replaceSubrange(offset..<offset + digits.count, with: digits)
    }

    func report(plain: StartupBench.Series, withDependencies: StartupBench.Series, into summary: Report) {
        let plugins = Self.count + 1
        let ratio = withDependencies.median / plain.median
        let met = ratio <= 1.1
        print("\nDependencies: plugboard list (warm) on \(plugins) plugins, each requiring 3 others, beside the same plugins requiring nothing")
        print("  median of \(Self.runs) interleaved runs, min–max in brackets; every plugin checked available first (untimed)")
        StartupBench.row("path", "figure (ms)", "baseline (ms)", "ratio", "goal", rss: "peak RSS (MiB)")
        StartupBench.row("warm, \(plugins) plugins, no requirements", plain.spread, rss: plain.peakMiB)
        StartupBench.row("warm, \(plugins) plugins, 3 requirements each", withDependencies.spread, StartupBench.ms(plain.median),
                         String(format: "%.2fx", ratio), "≤ 1.10x \(met ? "ok" : "MISSED")", rss: withDependencies.peakMiB)
        let perPlugin = plain.median / Double(plugins) * 1000
        let resolution = (withDependencies.median - plain.median) / Double(plugins) * 1000
        StartupBench.row("resolution per plugin (µs)", String(format: "%.1f", resolution), String(format: "%.1f", perPlugin),
                         String(format: "%.2fx", resolution / perPlugin), rss: "—")
        print("  resolution per plugin = (with − without) / \(plugins); baseline: warm start per plugin without requirements")
        summary.begin("Dependencies: warm start, \(plugins) plugins requiring 3 each (\(Self.runs) runs)")
        summary.add("warm start with requirements", unit: "ms", samples: withDependencies.milliseconds,
                    baselineName: "warm, no requirements", baseline: plain.milliseconds, goal: .ratioAtMost(1.1))
    }
}
