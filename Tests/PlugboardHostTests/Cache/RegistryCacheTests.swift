import Foundation
import Plugboard
import PlugboardDemo
@testable import PlugboardHost
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

    func configuration(_ dir: TemporaryDirectory, _ cache: TemporaryDirectory) -> PluginHost.Configuration {
        .init(pluginsDirectory: dir.path, cacheDirectory: cache.path)
    }

    /// A host on `dir` with `cache`; the caller shuts it down.
    func host(_ dir: TemporaryDirectory, _ cache: TemporaryDirectory) -> PluginHost {
        let host = PluginHost(configuration: configuration(dir, cache))
        host.declareDemoExtensionPoints()
        return host
    }

    /// One start that fills the cache: a host that discovers `dir`, then shuts down.
    func discoverOnce(_ dir: TemporaryDirectory, _ cache: TemporaryDirectory) throws {
        try withHost(configuration(dir, cache)) { _ = try $0.discover() }
    }

    func cacheFile(_ cache: TemporaryDirectory) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasPrefix("registry-") && $0.hasSuffix(".cache") }
        #expect(names.count == 1, "\(names)")
        return cache.file(try #require(names.first))
    }

    @Test func aWarmStartOpensNoPluginFileAndStillActivates() throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        let cold = host(dir, cache)
        defer { cold.shutdown() }
        #expect(try cold.discover().allSatisfy { $0.status == .available })
        #expect(cold.lastDiscovery.filesRead == 3)
        #expect(cold.lastDiscovery.filesScanned == 3)

        let warm = host(dir, cache)
        defer { warm.shutdown() }
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
    }

    enum Damage: String, CaseIterable, Sendable {
        case garbage, truncated, otherFormat, otherSDKABI, otherToolchain
    }

    @Test(arguments: Damage.allCases)
    func aDamagedOrForeignCacheIsIgnoredWithOneWarningAndRebuilt(_ damage: Damage) throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        try discoverOnce(dir, cache)
        let file = try cacheFile(cache)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        // A keyed field as the cache's coding writes it: key, tag, payload.
        func field(_ key: String, tag: UInt8, _ payload: [UInt8]) -> [UInt8] {
            withUnsafeBytes(of: UInt32(key.utf8.count).littleEndian, Array.init) + Array(key.utf8) + [tag] + payload
        }
        func string(_ text: String) -> [UInt8] {
            withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian, Array.init) + Array(text.utf8)
        }
        let integer: (Int64) -> [UInt8] = { value in withUnsafeBytes(of: value.littleEndian, Array.init) }
        switch damage {
        case .garbage:
            try Data("\u{0}\u{7f}not a cache at all".utf8).write(to: URL(fileURLWithPath: file))
        case .truncated:
            try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: file))
        case .otherFormat:
            // The header comes first: the first match is the cache's own field.
            try patchBytes(at: file, replacing: field("format", tag: 2, integer(3)), with: field("format", tag: 2, integer(99)))
        case .otherSDKABI:
            try patchBytes(at: file, replacing: field("sdkABI", tag: 5, string(Fixtures.baseline.sdkABI.description)), with: field("sdkABI", tag: 5, string("9.\(Fixtures.baseline.sdkABI.minor)")))
        case .otherToolchain:
            try patchBytes(at: file, replacing: Fixtures.toolchainPatch.current, with: Fixtures.toolchainPatch.foreign)
        }
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))) != bytes, "the damage must change the file")

        let next = host(dir, cache)
        defer { next.shutdown() }
        let records = try next.discover()
        #expect(records.allSatisfy { $0.status == .available })
        #expect(next.lastDiscovery.filesScanned == 3)
        let warnings = next.diagnostics.filter { $0.code == "cache-ignored" }
        #expect(warnings.count == 1, "\(next.diagnostics)")
        #expect(warnings.first?.message.contains(file) == true)
        if case .otherFormat = damage { #expect(warnings.first?.message.contains("has format 99, this host reads format 3") == true) }
        // Rebuilt: valid again.
        let after = host(dir, cache)
        defer { after.shutdown() }
        _ = try after.discover()
        #expect(after.lastDiscovery.cacheHits == 3)
        #expect(after.diagnostics.isEmpty)
    }

    @Test func aFileReplacedWithMvIsExaminedAgain() throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        try discoverOnce(dir, cache)
        let staged = try dir.copy(Fixtures.library("AlphaOld"), as: ".staged")
        #expect(rename(staged, dir.file("libAlpha.so")) == 0)
        let next = host(dir, cache)
        defer { next.shutdown() }
        let records = try next.discover()
        #expect(next.lastDiscovery.filesScanned == 1)
        #expect(records.first { $0.path == dir.file("libAlpha.so") }?.version == SemanticVersion(0, 9, 0))
    }

    @Test func aRewriteInPlaceWithItsModificationTimeRestoredIsExaminedAgain() throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        try discoverOnce(dir, cache)
        let path = dir.file("libGamma.so")
        var before = stat()
        stat(path, &before)
        // Same size, different bytes (here: another toolchain's name), then
        // the old mtime put back as `touch -d` or an rsync would.
        try patchBytes(at: path, replacing: Fixtures.toolchainPatch.current, with: Fixtures.toolchainPatch.foreign)
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        var after = stat()
        stat(path, &after)
        #expect(after.st_size == before.st_size && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec && after.st_mtim.tv_sec == before.st_mtim.tv_sec)

        let next = host(dir, cache)
        defer { next.shutdown() }
        let records = try next.discover()
        #expect(next.lastDiscovery.filesRead == 1)
        #expect(records.first { $0.path == path }?.code == "toolchain-mismatch")
    }

    /// A file rewritten after a warm start learned it from the cache: at
    /// activation its bytes are not the scanned ones, so nothing of it loads,
    /// and the next start examines it again.
    @Test func aFileChangedAfterItsScanIsRefusedAtActivation() throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        try discoverOnce(dir, cache)
        let warm = host(dir, cache)
        defer { warm.shutdown() }  // also when a check throws before the shutdown below
        #expect(try warm.discover().allSatisfy { $0.status == .available })
        #expect(warm.lastDiscovery.filesRead == 0)
        let gamma = dir.file("libGamma.so")
        // Still a good plugin (every static check passes), but not the bytes scanned.
        try patchBytes(at: gamma, replacing: Array("echo from".utf8), with: Array("ECHO FROM".utf8))

        #expect(warm.registry.providers(of: Commands.self).map(\.name) == ["alpha", "beta"])
        let record = try #require(warm.records.last { $0.path == gamma })
        #expect(record.code == "file-changed")
        #expect(record.reason?.contains("it is not the file that was scanned") == true, "\(record.reason ?? "")")
        warm.shutdown()

        let next = host(dir, cache)
        defer { next.shutdown() }
        #expect(try next.discover().first { $0.path == gamma }?.status == .available)
        #expect(next.lastDiscovery.filesRead == 1)
    }

    /// A cache directory that cannot be made is not used, said once with the
    /// fix; the plugins are examined as without a cache.
    @Test func aCacheThatCannotBeWrittenIsReportedAndTheHostCarriesOn() throws {
        let dir = try installed(), blocker = try TemporaryDirectory()
        try blocker.write(Data("a file, not a directory".utf8), as: "file")
        let host = PluginHost(configuration: .init(pluginsDirectory: dir.path, cacheDirectory: blocker.file("file") + "/cache"))
        defer { host.shutdown() }
        host.declareDemoExtensionPoints()
        #expect(try host.discover().map(\.status) == [.available, .available, .available])
        let problems = host.diagnostics.filter { $0.code == "cache-directory-untrusted" }
        #expect(problems.count == 1, "\(host.diagnostics)")
        #expect(problems.first?.message.contains("--cache DIR") == true)
    }

    @Test func entriesOfRemovedFilesAreDropped() throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        try discoverOnce(dir, cache)
        try FileManager.default.removeItem(atPath: dir.file("libBeta.so"))
        try discoverOnce(dir, cache)
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: try cacheFile(cache))), as: UTF8.self)
        #expect(!text.contains("libBeta.so"))
        #expect(text.contains("libAlpha.so"))
    }

    /// Hosts starting at once on one cache all come up right and leave a
    /// cache the next start can use, round after round.
    @Test func concurrentHostsOnOneCacheAllComeUpAndLeaveAValidCache() throws {
        let dir = try installed()
        for round in 0..<8 {
            let cache = try TemporaryDirectory()
            let results = Mutex<[[PluginStatus]]>([])
            concurrently(4, prepare: { self.host(dir, cache) }) { host in
                defer { host.shutdown() }
                let statuses = (try? host.discover().map(\.status)) ?? []
                results.withLock { $0.append(statuses) }
            }
            #expect(results.withLock { $0 }.allSatisfy { $0 == [.available, .available, .available] }, "round \(round)")
            let after = host(dir, cache)
            defer { after.shutdown() }
            _ = try after.discover()
            #expect(after.lastDiscovery.cacheHits == 3, "round \(round)")
            #expect(after.diagnostics.isEmpty, "round \(round): \(after.diagnostics)")
        }
    }
}
