import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost
import Synchronization
import Testing

/// What is checked is what is loaded: files swapped, rewritten or truncated
/// while the host works load nothing unchecked and never crash it.
@Suite struct CheckedBytesTests {
    /// A thread keeps swapping the installed file (by rename) between a good
    /// plugin and a C library whose constructor writes a marker, while the
    /// host examines and activates it. The marker must never appear: the
    /// library is refused from its bytes, and only checked bytes are loaded.
    /// The marker is given to each host's scanners (never set in this
    /// process's environment, which tests running in parallel share); in
    /// this process, the proof is that no image the host mapped has the C
    /// library's bytes.
    @Test func aFileSwappedBetweenCheckAndLoadNeverRunsUncheckedCode() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        let marker = work.file("constructor-ran")
        let scanner = ScannerSettings(extraEnvironment: ["PLUGBOARD_FIXTURE_MARKER": marker])
        let good = try work.copy(Fixtures.library("Alpha"), as: "good.so")
        let evil = try work.copy(Fixtures.library("CMarker"), as: "evil.so")
        let evilBytes = try Data(contentsOf: URL(fileURLWithPath: evil))
        let target = dir.file("plugin.so")
        try FileManager.default.copyItem(atPath: good, toPath: target)
        let swapper = swapping(target, between: good, and: evil, staging: work)
        var outcomes: [String: Int] = [:]
        // At least 60 loads, and on until both files were seen (a busy machine
        // can starve the swapping thread for a while), at most 600.
        var loads = 0
        while loads < 60 || (loads < 600 && (outcomes["active", default: 0] == 0 || outcomes["not-swift-plugin", default: 0] == 0)) {
            loads += 1
            let cache = try TemporaryDirectory(), images = try TemporaryDirectory()
            let host = PluginHost(configuration: .with(
                pluginsDirectory: dir.path, imagesDirectory: images.path, cacheDirectory: cache.path, scanner: scanner))
            defer { host.shutdown() }
            host.declareDemoExtensionPoints()
            let record = try host.loadAll()[0]
            outcomes[record.code ?? record.status.rawValue, default: 0] += 1
            let mapped = mappedFiles(under: images.path)
            if record.status == .active {
                #expect(try host.registry.providers(of: Commands.self).map { try $0.run(arguments: []) } == ["alpha"])
                #expect(!mapped.isEmpty, "the active plugin's image is in /proc/self/maps: the check below looks in the right place")
            }
            for file in mapped {
                #expect(try Data(contentsOf: URL(fileURLWithPath: file)) != evilBytes, "the C library was mapped in the host: \(file)")
            }
        }
        swapper.stop()
        #expect(!FileManager.default.fileExists(atPath: marker), "the C library's constructor ran")
        #expect(Set(outcomes.keys).isSubset(of: ["active", "not-swift-plugin", "file-changed"]), "\(outcomes)")
        #expect(outcomes["active", default: 0] > 0 && outcomes["not-swift-plugin", default: 0] > 0, "both files were seen: \(outcomes)")
    }

    /// A thread rewrites and truncates the file in place while the host reads
    /// it again and again: every result is a record with a reason.
    @Test func aFileRewrittenOrTruncatedDuringAScanIsRejectedNeverACrash() throws {
        let dir = try TemporaryDirectory()
        let bytes = try Data(contentsOf: Fixtures.library("Alpha"))
        let target = dir.file("plugin.so")
        try bytes.write(to: URL(fileURLWithPath: target))
        let length = Atomic<Int>(bytes.count)
        let writer = BackgroundLoop {
            let fd = open(target, O_WRONLY)
            guard fd >= 0 else { return }
            let current = length.load(ordering: .relaxed)
            let next = current > 4096 ? current / 2 : bytes.count
            length.store(next, ordering: .relaxed)
            ftruncate(fd, off_t(next))
            _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, next, 0) }
            close(fd)
        }
        let cache = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(cacheDirectory: cache.path))
        defer { host.shutdown() }
        var codes: Set<String> = []
        for _ in 0..<100 {
            let record = host.examine(files: [target], rescan: true)[0]
            codes.insert(record.code ?? record.status.rawValue)
        }
        writer.stop()
        let expected: Set<String> = ["available", "file-changed", "malformed-elf", "empty-file", "not-elf", "duplicate-id", "scan-crashed", "no-entry-symbol", "load-failed"]
        #expect(codes.isSubset(of: expected), "\(codes)")
        #expect(codes.contains("file-changed") || codes.contains("malformed-elf"), "the rewrites were noticed: \(codes)")
    }

    /// `cp` over an installed plugin rewrites its inode in place. The host
    /// runs a private copy, so the plugin it is calling is untouched; the
    /// next start examines the changed file.
    @Test func copyingOverAnActivePluginDoesNotTouchTheRunningCode() throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let installed = try dir.copy(Fixtures.library("Alpha"), as: "plugin.so")
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        defer { host.shutdown() }  // also when a check throws before the shutdown below
        host.declareDemoExtensionPoints()
        try host.loadAll()
        let command = try #require(host.registry.providers(of: Commands.self).first)
        #expect(try command.run(arguments: ["before"]) == "alpha before")

        let replacement = try Data(contentsOf: Fixtures.library("Beta"))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: installed))  // same inode, like cp
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: replacement)
        try handle.close()

        #expect(try command.run(arguments: ["after"]) == "alpha after")
        #expect(try host.registry.providers(of: Commands.self).map { try $0.run(arguments: []) } == ["alpha"])
        host.shutdown()

        let next = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        defer { next.shutdown() }
        #expect(try next.discover().first?.id == "fixture.beta")
        #expect(next.lastDiscovery.filesScanned == 1)
    }
}
