import Foundation
import PlugboardHostTesting

/// Plugin sets through a registry (docker-registry started here on
/// 127.0.0.1): `plugboard pull` of a 200-plugin set beside `curl` fetching
/// the same blobs in one process (the floor: the transfer alone, no
/// checks); an update where one plugin of 200 changed (bytes sent and
/// fetched, counted); `follow --once` on an unchanged tag beside `curl -I`
/// of the same manifest (the idle cost of a poll). All processes, spawned
/// alike; pulls go to fresh folders so every blob is fetched.
struct FleetBench {
    let startup: StartupBench
    static let count = 200
    static let runs = 5

    func run(into summary: Report) {
        guard LocalRegistry.program != nil, FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else {
            print("\nFleet: skipped, docker-registry or curl is missing (sudo apt-get install docker-registry curl)")
            return
        }
        StartupBench.inWorkFolder("fleet", benchmark: "fleet") { work in try measure(in: work, into: summary) }
    }

    private func measure(in work: URL, into summary: Report) throws {
        let server = try LocalRegistry(storage: work.appendingPathComponent("registry").path)
        defer { server.stop() }
        let template = try Data(contentsOf: URL(fileURLWithPath: startup.template))
        let idOffset = try StartupBench.placeholderOffset(in: template, file: startup.template)
        let set1 = work.appendingPathComponent("set1")
        let files = try StartupBench.install(1...Self.count, from: template, at: idOffset, in: set1)
        let key = work.appendingPathComponent("release.key").path
        let cache = try StartupBench.emptyDirectory(work.appendingPathComponent("cache"))
        _ = try startup.spawn(startup.plugboard, ["keygen", key], in: work)
        _ = try startup.spawn(startup.plugboard, ["lock", "--sign", key, "--plugins", set1.path, "--cache", cache, "--sequence", "1"], in: work)
        let reference = "127.0.0.1:\(server.port)/bench/set:stable"
        let published = try startup.spawn(startup.plugboard, ["publish", set1.path, reference, "--json"], in: work)
        let digest = try json(published)["digest"] as? String ?? ""

        // The floor's URLs: every blob of the set's manifest, by digest.
        let index = try fetch("http://127.0.0.1:\(server.port)/v2/bench/set/manifests/\(digest)", accept: "application/vnd.oci.image.index.v1+json", in: work)
        guard let manifestDigest = ((index["manifests"] as? [[String: Any]])?.first)?["digest"] as? String else { throw StartupBench.Failure("no manifest in the index") }
        let manifest = try fetch("http://127.0.0.1:\(server.port)/v2/bench/set/manifests/\(manifestDigest)", accept: "application/vnd.oci.image.manifest.v1+json", in: work)
        let layers = (manifest["layers"] as? [[String: Any]] ?? []).compactMap { $0["digest"] as? String }
        let totalBytes = (manifest["layers"] as? [[String: Any]] ?? []).compactMap { $0["size"] as? Int }.reduce(0, +)
        var curlArguments = ["-s", "--fail"]
        for (number, layer) in layers.enumerated() {
            curlArguments += ["-o", work.appendingPathComponent("curl/\(number)").path, "http://127.0.0.1:\(server.port)/v2/bench/set/blobs/\(layer)"]
        }

        var pulls = StartupBench.Series(), floors = StartupBench.Series()
        for run in 0..<Self.runs {
            let folder = work.appendingPathComponent("hosts/\(run)/plugins").path
            pulls.add(try startup.spawn(startup.plugboard, ["pull", reference, "--plugins", folder, "--trusted-key", key + ".pub",
                                                            "--cache", cache, "--sequence-floor", "1", "--json"], in: work))
            _ = try StartupBench.emptyDirectory(work.appendingPathComponent("curl"))
            floors.add(try startup.spawn("/usr/bin/curl", curlArguments, in: work))
        }

        // One plugin of 200 changed, signed as sequence 2, published, pulled into a folder holding set 1.
        let changed = try StartupBench.install((Self.count + 1)...(Self.count + 1), from: template, at: idOffset, in: set1)
        try FileManager.default.removeItem(atPath: files[0])
        try FileManager.default.moveItem(atPath: changed[0], toPath: files[0])
        _ = try startup.spawn(startup.plugboard, ["lock", "--sign", key, "--plugins", set1.path, "--cache", cache, "--sequence", "2"], in: work)
        let update = try json(try startup.spawn(startup.plugboard, ["publish", set1.path, reference, "--json"], in: work))
        let updated = try json(try startup.spawn(startup.plugboard, ["pull", reference, "--plugins", work.appendingPathComponent("hosts/0/plugins").path,
                                                                      "--trusted-key", key + ".pub", "--cache", cache, "--json"], in: work))
        let pluginSize = (try? FileManager.default.attributesOfItem(atPath: files[0]))?[.size] as? Int ?? 0

        // Idle polls: the tag unchanged.
        var polls = StartupBench.Series(), heads = StartupBench.Series()
        let follow = ["follow", reference, "--plugins", work.appendingPathComponent("hosts/0/plugins").path, "--trusted-key", key + ".pub", "--cache", cache, "--once"]
        for _ in 0..<Self.runs {
            polls.add(try startup.spawn(startup.plugboard, follow, in: work))
            heads.add(try startup.spawn("/usr/bin/curl", ["-s", "--fail", "-I", "-H", "Accept: application/vnd.oci.image.index.v1+json",
                                                          "http://127.0.0.1:\(server.port)/v2/bench/set/manifests/stable"], in: work))
        }

        let ratio = pulls.median / floors.median
        print("\nFleet: \(Self.count) plugins (\(totalBytes / 1_048_576) MiB) through docker-registry on 127.0.0.1, median of \(Self.runs) interleaved runs")
        StartupBench.row("path", "figure (ms)", "baseline (ms)", "ratio", "goal", rss: "peak RSS (MiB)")
        StartupBench.row("pull, \(Self.count) plugins, checked and switched in", pulls.spread, StartupBench.ms(floors.median),
                         String(format: "%.2fx", ratio), "≤ 1.5x \(ratio <= 1.5 ? "ok" : "MISSED")", rss: pulls.peakMiB)
        StartupBench.row("follow --once, tag unchanged", polls.spread, StartupBench.ms(heads.median), String(format: "%.2fx", polls.median / heads.median), rss: polls.peakMiB)
        print("  baselines: curl fetching the same \(layers.count) blobs in one process (no checks); curl -I of the tag (one process)")
        print("  update, 1 plugin of \(Self.count) changed: publish sent \(update["blobsSent"] ?? "?") blobs, \(update["bytesSent"] ?? "?") bytes; "
            + "pull fetched \(updated["bytesFetched"] ?? "?") of \(updated["bytes"] ?? "?") bytes, \(updated["filesReused"] ?? "?") files reused (one plugin: \(pluginSize) bytes)")
        print("  a follower's idle poll in its loop is one HEAD request; the row above adds a process start")
        summary.begin("Fleet: \(Self.count)-plugin set through a registry (\(Self.runs) runs)")
        summary.add("pull, \(Self.count) plugins", unit: "ms", samples: pulls.milliseconds, baselineName: "curl, same blobs, one process",
                    baseline: floors.milliseconds, goal: .ratioAtMost(1.5))
        summary.add("follow --once, unchanged", unit: "ms", samples: polls.milliseconds, baselineName: "curl -I of the tag", baseline: heads.milliseconds)
        summary.add("update of 1 plugin: bytes fetched", unit: "bytes", samples: [Double(updated["bytesFetched"] as? Int ?? -1)],
                    baselineName: "bytes of the changed blobs", baseline: [Double(update["bytesSent"] as? Int ?? 0)], goal: .ratioAtMost(1.0),
                    note: "the changed plugin (\(pluginSize) bytes), the lock file and its signature")
    }

    private func json(_ run: StartupBench.ProcessRun) throws -> [String: Any] {
        (try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any]) ?? [:]
    }

    /// A manifest through curl (the bench links no HTTP client).
    private func fetch(_ url: String, accept: String, in work: URL) throws -> [String: Any] {
        try json(try startup.spawn("/usr/bin/curl", ["-s", "--fail", "-H", "Accept: \(accept)", url], in: work))
    }
}
