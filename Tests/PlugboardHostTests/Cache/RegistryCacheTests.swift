import Foundation
@_spi(PlugboardHost) import Plugboard
import PlugboardDemo
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
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
        .with(pluginsDirectory: dir.path, cacheDirectory: cache.path)
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
        let coldRecords = try cold.discover()
        #expect(coldRecords.allSatisfy { $0.status == .available })
        #expect(cold.lastDiscovery.filesRead == 3)
        #expect(cold.lastDiscovery.filesScanned == 3)

        let warm = host(dir, cache)
        defer { warm.shutdown() }
        let records = try warm.discover()
        #expect(records.map(\.status) == [.available, .available, .available])
        #expect(records.compactMap(\.id) == ["fixture.alpha", "fixture.beta", "fixture.gamma"])
        // The file details come from the cache.
        #expect(records.map(\.file) == coldRecords.map(\.file) && records.allSatisfy { $0.file?.hasEntryPoint == true })
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
        func string(_ text: String) -> [UInt8] {
            withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian, Array.init) + Array(text.utf8)
        }
        switch damage {
        case .garbage:
            try Data("\u{0}\u{7f}not a cache at all".utf8).write(to: URL(fileURLWithPath: file))
        case .truncated:
            try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: file))
        case .otherFormat:
            // "PBRC", then the format number.
            try patchBytes(at: file, replacing: Array("PBRC".utf8) + [UInt8(RegistryCache.format), 0, 0, 0], with: Array("PBRC".utf8) + [99, 0, 0, 0])
        case .otherSDKABI:
            // The host key: three texts, the SDK ABI first.
            let count: [UInt8] = [3, 0, 0, 0]
            try patchBytes(at: file, replacing: count + string(Fixtures.baseline.sdkABI.description), with: count + string("9.\(Fixtures.baseline.sdkABI.minor)"))
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
        if case .otherFormat = damage { #expect(warnings.first?.message.contains("has format 99, this host reads format \(RegistryCache.format)") == true) }
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
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: blocker.file("file") + "/cache"))
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

    /// A start reads the entries of the files it was asked about only: a
    /// damaged entry of another folder costs it nothing and is not noticed;
    /// that folder's next start examines the file again. Another folder's
    /// entries stay while their files exist.
    @Test func aStartDecodesOnlyTheEntriesOfItsOwnFiles() throws {
        let first = try installed(), second = try installed(), cache = try TemporaryDirectory()
        try discoverOnce(first, cache)
        try discoverOnce(second, cache)
        // The entry of the second folder's libBeta.so, found through the index.
        let file = try cacheFile(cache)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        func u32(_ offset: Int) -> Int { bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) } }
        let hostLength = u32(8), count = u32(12 + hostLength)
        #expect(count == 6)
        let target = Array(second.file("libBeta.so").utf8)
        let record = try #require((0..<count).map { 20 + hostLength + $0 * 16 }.first { base in
            Array(bytes[u32(base)..<(u32(base) + u32(base + 4))]) == target
        })
        for offset in u32(record + 8)..<(u32(record + 8) + u32(record + 12)) { bytes[offset] = 0xEE }
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        try withHost(configuration(first, cache)) { host throws in
            let records = try host.discover()
            #expect(records.allSatisfy { $0.status == .available })
            #expect(host.lastDiscovery.cacheHits == 3)
            #expect(!host.diagnostics.contains { $0.code == "cache-ignored" }, "the other folder's entry is never decoded")
        }
        try withHost(configuration(second, cache)) { host throws in
            let records = try host.discover()
            #expect(records.allSatisfy { $0.status == .available })
            #expect(host.lastDiscovery.cacheHits == 2)
            #expect(host.lastDiscovery.filesScanned == 1, "the damaged entry's file is examined again")
        }
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self)
        #expect(text.contains(first.file("libGamma.so")) && text.contains(second.file("libBeta.so")))
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

    /// A rescan that could not confirm a file (here its scanner cannot be
    /// started: `scanner-unavailable`, which is not remembered) drops the
    /// remembered answer: the next look without `--rescan` examines the
    /// file again instead of showing what the rescan contradicted.
    @Test func aRescanThatDisagreesLeavesNoStaleEntry() throws {
        let dir = try installed(), cache = try TemporaryDirectory()
        try discoverOnce(dir, cache)
        var broken = configuration(dir, cache)
        broken.scanner = ScannerSettings(executable: dir.file("no-such-scanner"))
        withHost(broken) { host in
            let records = host.discover(files: [dir.file("libAlpha.so")], rescan: true)
            #expect(records.map(\.code) == ["scanner-unavailable"], "\(records)")
        }
        let next = host(dir, cache)
        defer { next.shutdown() }
        let records = next.discover(files: [dir.file("libAlpha.so")])
        #expect(records.map(\.status) == [.available])
        #expect(next.lastDiscovery.filesScanned == 1, "examined again, not answered from the cache")
    }
}
