import Foundation
import Plugboard
import PlugboardHost
import Synchronization
import Testing

/// The registry cache: a warm start opens no plugin file; a damaged or
/// foreign cache is ignored with one warning and rebuilt; changed files are
/// examined again, whatever the change.
@Suite struct RegistryCacheTests {
    let names = ["Alpha", "Beta", "Gamma"]

    func installed() throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory()
        for name in names { try dir.copy(Fixtures.library(name), as: "lib\(name).so") }
        return dir
    }

    func host(_ dir: TemporaryDirectory, _ cache: TemporaryDirectory) -> PluginHost {
        let host = PluginHost(configuration: .init(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        host.declareStandardExtensionPoints()
        return host
    }

    func cacheFile(_ cache: TemporaryDirectory) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasPrefix("registry-") && $0.hasSuffix(".json") }
        #expect(names.count == 1, "\(names)")
        return cache.file(try #require(names.first))
    }

    @Test func aWarmStartOpensNoPluginFileAndStillActivates() throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        let cold = host(dir, cache)
        #expect(try cold.discover().allSatisfy { $0.status == .available })
        #expect(cold.lastDiscovery.filesRead == 3)
        #expect(cold.lastDiscovery.filesScanned == 3)

        let warm = host(dir, cache)
        let records = try warm.discover()
        #expect(records.map(\.status) == [.available, .available, .available])
        #expect(records.compactMap(\.id) == ["fixture.alpha", "fixture.beta", "fixture.gamma"])
        #expect(warm.lastDiscovery == {
            var expected = DiscoveryStatistics()
            expected.cacheHits = 3
            return expected
        }())
        // Known from the cache, loaded on first use from a fresh copy of the same bytes.
        #expect(try warm.registry.providers(of: Commands.self).map { try $0.run(arguments: []) } == ["alpha", "beta", "gamma"])
        warm.shutdown()
    }

    enum Damage: String, CaseIterable, Sendable {
        case garbage, truncated, otherFormat, otherSDKABI, otherToolchain
    }

    @Test(arguments: Damage.allCases)
    func aDamagedOrForeignCacheIsIgnoredWithOneWarningAndRebuilt(_ damage: Damage) throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        _ = try host(dir, cache).discover()
        let file = try cacheFile(cache)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let damaged: String
        switch damage {
        case .garbage: damaged = "\u{0}\u{7f}not json at all"
        case .truncated: damaged = String(text.prefix(text.count / 2))
        case .otherFormat: damaged = text.replacingOccurrences(of: "\"format\":1", with: "\"format\":99")
        case .otherSDKABI: damaged = text.replacingOccurrences(of: "\"sdkABI\":\"1.0\"", with: "\"sdkABI\":\"2.0\"")
        case .otherToolchain: damaged = text.replacingOccurrences(of: "\"toolchain\":\"clang", with: "\"toolchain\":\"other clang")
        }
        #expect(damaged != text, "the damage must change the file")
        try damaged.write(toFile: file, atomically: false, encoding: .utf8)

        let next = host(dir, cache)
        let records = try next.discover()
        #expect(records.allSatisfy { $0.status == .available })
        #expect(next.lastDiscovery.filesScanned == 3)
        let warnings = next.diagnostics.filter { $0.code == "cache-ignored" }
        #expect(warnings.count == 1, "\(next.diagnostics)")
        #expect(warnings.first?.message.contains(file) == true)
        // Rebuilt: valid again.
        let after = host(dir, cache)
        _ = try after.discover()
        #expect(after.lastDiscovery.cacheHits == 3)
        #expect(after.diagnostics.isEmpty)
    }

    @Test func aFileReplacedWithMvIsExaminedAgain() throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        _ = try host(dir, cache).discover()
        let staged = try dir.copy(Fixtures.library("AlphaOld"), as: ".staged")
        #expect(rename(staged, dir.file("libAlpha.so")) == 0)
        let next = host(dir, cache)
        let records = try next.discover()
        #expect(next.lastDiscovery.filesScanned == 1)
        #expect(records.first { $0.path == dir.file("libAlpha.so") }?.version == SemanticVersion(0, 9, 0))
    }

    @Test func aRewriteInPlaceWithItsModificationTimeRestoredIsExaminedAgain() throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        _ = try host(dir, cache).discover()
        let path = dir.file("libGamma.so")
        var before = stat()
        stat(path, &before)
        // Same size, different bytes (here: another toolchain's name), then
        // the old mtime put back as `touch -d` or an rsync would.
        try patchBytes(at: path, replacing: Array("clang version 21.".utf8), with: Array("clang version 99.".utf8))
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        var after = stat()
        stat(path, &after)
        #expect(after.st_size == before.st_size && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec && after.st_mtim.tv_sec == before.st_mtim.tv_sec)

        let next = host(dir, cache)
        let records = try next.discover()
        #expect(next.lastDiscovery.filesRead == 1)
        #expect(records.first { $0.path == path }?.code == "toolchain-mismatch")
    }

    @Test func entriesOfRemovedFilesAreDropped() throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        _ = try host(dir, cache).discover()
        try FileManager.default.removeItem(atPath: dir.file("libBeta.so"))
        _ = try host(dir, cache).discover()
        let text = try String(contentsOfFile: try cacheFile(cache), encoding: .utf8)
        #expect(!text.contains("libBeta.so"))
        #expect(text.contains("libAlpha.so"))
    }

    /// Hosts starting at once on one cache all come up right and leave a
    /// cache the next start can use, round after round.
    @Test func concurrentHostsOnOneCacheAllComeUpAndLeaveAValidCache() throws {
        let dir = try installed()
        for round in 0..<8 {
            let cache = try TemporaryDirectory()
            let hosts = 4
            let barrier = Barrier(count: hosts)
            let results = Mutex<[[PluginStatus]]>([])
            let group = DispatchGroup()
            for _ in 0..<hosts {
                group.enter()
                Thread.detachNewThread {
                    let host = self.host(dir, cache)
                    barrier.arriveAndWait()
                    let statuses = (try? host.discover().map(\.status)) ?? []
                    results.withLock { $0.append(statuses) }
                    group.leave()
                }
            }
            group.wait()
            #expect(results.withLock { $0 }.allSatisfy { $0 == [.available, .available, .available] }, "round \(round)")
            let after = host(dir, cache)
            _ = try after.discover()
            #expect(after.lastDiscovery.cacheHits == 3, "round \(round)")
            #expect(after.diagnostics.isEmpty, "round \(round): \(after.diagnostics)")
        }
    }
}

/// Releases every waiting thread at once, when the last one arrives.
final class Barrier: Sendable {
    private let state: Mutex<(waiting: Int, generation: Int)>
    private let count: Int
    private let condition = NSCondition()

    init(count: Int) {
        self.count = count
        state = Mutex((0, 0))
    }

    func arriveAndWait() {
        condition.lock()
        defer { condition.unlock() }
        let (last, generation) = state.withLock { state -> (Bool, Int) in
            state.waiting += 1
            return (state.waiting == count, state.generation)
        }
        if last {
            state.withLock { state in
                state.waiting = 0
                state.generation += 1
            }
            condition.broadcast()
            return
        }
        while state.withLock({ $0.generation }) == generation { condition.wait() }
    }
}
