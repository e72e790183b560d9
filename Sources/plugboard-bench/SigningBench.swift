import Foundation
import PlugboardHost

/// What a signed plugin set costs per start: `plugboard list` (warm) on 201
/// locked plugins, with the lock file's signature required and checked,
/// beside the same start with the lock file alone; and the check itself
/// (the signature file read, both Ed25519 signatures over the lock file's
/// BLAKE2b-512, the terms) timed in this process on the same lock file.
struct SigningBench {
    /// Spawning and the template plugin come from the startup benchmark.
    let startup: StartupBench

    static let count = 200
    static let runs = 7

    func run(into summary: Report) {
        StartupBench.inWorkFolder("signing", benchmark: "signing") { work in try measure(in: work, into: summary) }
    }

    func measure(in work: URL, into summary: Report) throws {
        let template = try Data(contentsOf: URL(fileURLWithPath: startup.template))
        let idOffset = try StartupBench.placeholderOffset(in: template, file: startup.template)
        let folder = work.appendingPathComponent("plugins")
        // 0 is the template as it is: 201 plugins.
        _ = try StartupBench.install(0...Self.count, from: template, at: idOffset, in: folder)
        let cache = try StartupBench.emptyDirectory(work.appendingPathComponent("cache"))
        let data = work.appendingPathComponent("data").path
        let key = work.appendingPathComponent("release.key").path
        let common = ["--plugins", folder.path, "--cache", cache, "--data", data]
        _ = try startup.spawn(startup.plugboard, ["keygen", key], in: work)
        _ = try startup.spawn(startup.plugboard, ["lock", "--sign", key, "--plugins", folder.path, "--cache", cache], in: work)
        let locked = ["list", "--locked"] + common
        let signed = ["list", "--require-signatures", "--trusted-key", key + ".pub", "--sequence-floor", "1"] + common
        // Untimed: every plugin available both ways (a refused set would be cheaper).
        for arguments in [locked, signed] {
            let check = try startup.spawn(startup.plugboard, arguments + ["--json"], in: work)
            let plugins = ((try? JSONSerialization.jsonObject(with: check.stdout)) as? [String: Any])?["plugins"] as? [[String: Any]] ?? []
            let available = plugins.filter { $0["status"] as? String == "available" }.count
            guard available == Self.count + 1 else {
                throw StartupBench.Failure("\(arguments[1]): \(available) of \(Self.count + 1) available")
            }
        }
        var plain = StartupBench.Series(), checked = StartupBench.Series()
        // Interleaved, so drift on a shared machine hits both alike.
        for _ in 0..<Self.runs {
            plain.add(try startup.spawn(startup.plugboard, locked, in: work))
            checked.add(try startup.spawn(startup.plugboard, signed, in: work))
        }
        // The check alone, in this process: what a start (or a refresh after the lock changed) adds.
        let lockFile = folder.appendingPathComponent("plugboard.lock").path
        let lockBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: lockFile)))
        let publicKey = try String(contentsOfFile: key + ".pub", encoding: .utf8)
        guard let trusted = PublicSigningKey(text: publicKey) else { throw StartupBench.Failure("cannot read \(key).pub") }
        let check = Measure.samples(iterations: 200) { _ in
            let text = try? String(contentsOfFile: lockFile + ".minisig", encoding: .utf8)
            blackHole(text.flatMap(LockSignature.init(text:))?.verify(lockBytes, trustedKeys: [trusted]))
        }
        let read = Measure.samples(iterations: 200) { _ in blackHole(FileManager.default.contents(atPath: lockFile)) }
        report(plain: plain, checked: checked, check: check, read: read, lockSize: lockBytes.count, into: summary)
    }

    func report(plain: StartupBench.Series, checked: StartupBench.Series, check: [Double], read: [Double], lockSize: Int, into summary: Report) {
        let plugins = Self.count + 1
        let ratio = checked.median / plain.median
        print("\nSigned sets: plugboard list (warm) on \(plugins) locked plugins, signature required, beside the lock file alone")
        print("  median of \(Self.runs) interleaved runs, min–max in brackets; every plugin checked available both ways first (untimed)")
        StartupBench.row("path", "figure (ms)", "baseline (ms)", "ratio", "goal", rss: "peak RSS (MiB)")
        StartupBench.row("warm, \(plugins) plugins, --locked", plain.spread, rss: plain.peakMiB)
        StartupBench.row("warm, \(plugins) plugins, --require-signatures", checked.spread, StartupBench.ms(plain.median),
                         String(format: "%.2fx", ratio), "≤ 1.05x \(ratio <= 1.05 ? "ok" : "MISSED")", rss: checked.peakMiB)
        let checkMicros = Measure.median(check) / 1000, readMicros = Measure.median(read) / 1000
        StartupBench.row("signature check per start (µs)", String(format: "%.1f", checkMicros), String(format: "%.1f", readMicros),
                         String(format: "%.1fx", checkMicros / readMicros), rss: "—")
        print("  the check: read the .minisig, both Ed25519 signatures over the BLAKE2b-512 of the \(lockSize)-byte lock file, the terms;")
        print("  baseline: reading the lock file. Once per start, and again only when the lock, its signature or a key file changed")
        summary.begin("Signed sets: warm start, \(plugins) locked plugins (\(Self.runs) runs)")
        summary.add("warm start, signature required", unit: "ms", samples: checked.milliseconds,
                    baselineName: "warm, lock file only", baseline: plain.milliseconds, goal: .ratioAtMost(1.05))
        summary.add("signature check per start", unit: "µs", samples: check.map { $0 / 1000 },
                    baselineName: "read the lock file", baseline: read.map { $0 / 1000 })
    }
}
