import Foundation
import Plugboard
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

/// The seams between discovery, activation and `plugboard lock` that one
/// admission step closes: a lock file records only bytes that were checked
/// and scanned, a locked host compares the scanned id with the lock entry,
/// and a cache entry can save a scan but never a check.
@Suite struct AdmissionSeamTests {
    /// Another process keeps swapping the installed file (by rename) between
    /// a good plugin and a C library that fails the static checks while
    /// `plugboard lock` runs again and again. Every lock file either leaves
    /// the file out or records the good plugin's id with the good bytes' hash.
    @Test func aSwapDuringLockNeverRecordsBytesThatWereNotCheckedAndScanned() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let good = try work.copy(Fixtures.library("Alpha"), as: "good.so")
        let evil = try work.copy(Fixtures.library("CMarker"), as: "evil.so")
        let goodHash = LockFile.sha256(of: [UInt8](try Data(contentsOf: URL(fileURLWithPath: good))))
        let target = dir.file("libAlpha.so")
        try FileManager.default.copyItem(atPath: good, toPath: target)
        let swapper = swapping(target, between: good, and: evil, staging: work)
        defer { swapper.stop() }
        var seen: Set<String> = []
        var runs = 0
        // On until both outcomes were seen (at least 10 runs, at most 200:
        // a scanner's first move into its cgroup can take a kernel grace
        // period, ~20 ms, which widens the window a swap lands in).
        while runs < 10 || (runs < 200 && seen.count < 2) {
            runs += 1
            let lock = work.file("run-\(runs).lock")
            let result = try runProcess(
                Fixtures.executable("plugboard"), ["lock", "--plugins", dir.path, "--cache", cache.path, "--output", lock])
            #expect(result.status == 0, "\(result.stderr)")
            let entries = try LockFile.load(lock).plugins
            if let entry = entries.first {
                #expect(entry.sha256 == goodHash && entry.id == "fixture.alpha", "recorded \(entry)")
                seen.insert("locked")
            } else {
                seen.insert("left out")
            }
        }
        #expect(seen == ["locked", "left out"], "both files were seen in \(runs) runs: \(seen)")
    }

    /// A file renamed over the listed one after the directory was read: its
    /// owner and mode were never checked, so it is not read (`file-changed`);
    /// the next admission, which lists it, takes it.
    @Test func aFileRenamedOverTheListedOneIsNotRead() throws {
        let dir = try TemporaryDirectory(), images = try TemporaryDirectory()
        let target = try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        let admission = Admission(
            environment: .current, trust: .enforced, lock: nil, copies: PrivateCopies(directory: images.path), recordsSHA256: false)
        let listed = PluginDirectory.candidate(at: target)
        #expect(rename(try dir.copy(Fixtures.library("Alpha"), as: ".staged"), target) == 0)
        var ownership = OwnershipCheck()
        guard case let .failure(refusal) = admission.admit(listed, ownership: &ownership) else {
            Issue.record("the file put in the listed one's place was admitted")
            return
        }
        #expect(refusal.error.code == .fileChanged)
        #expect(refusal.error.reason.contains("another file took its place after its ownership was checked"))
        var again = OwnershipCheck()
        if case let .failure(refusal) = admission.admit(PluginDirectory.candidate(at: target), ownership: &again) {
            Issue.record("listed again, it is refused: \(refusal.error)")
        }
    }

    /// A lock entry whose hash matches but whose id is another plugin's: the
    /// file is refused before any of its code runs in the host.
    @Test func aLockedHostRefusesAPluginWhoseScannedIDIsNotTheLockedOne() throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let alpha = try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        let beta = try dir.copy(Fixtures.library("Beta"), as: "libBeta.so")
        let lock = LockFile.defaultPath(for: dir.path)
        try writeLockFile(lock, listing: [(alpha, "fixture.beta"), (beta, "fixture.beta")])
        for _ in 0..<2 {  // cold, then warm (the cached scan is compared too)
            let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path, lockFile: lock))
            host.declare(Commands.self)
            let records = try host.loadAll()
            defer { host.shutdown() }
            #expect(records.map { $0.code ?? $0.status.rawValue } == ["lock-id-mismatch", "active"])
            #expect(records[0].reason?.contains("records fixture.beta 1.0.0") == true, "\(records[0].reason ?? "")")
            #expect(host.activePluginIDs == ["fixture.beta"])
        }
    }

    /// Forges the cache entry of `libAlpha.so` to vouch for `replacement`:
    /// its identity and content hash patched in, the good scan kept.
    func forgeCacheEntry(cache: String, plugin: String, withHash: Bool = true) throws {
        let registry = RegistryCache(directory: cache, environment: .current)
        var (entries, warning) = registry.load()
        #expect(warning == nil)
        let old = try #require(entries[plugin])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plugin)))
        entries[plugin] = CacheEntry(
            identity: try #require(FileIdentity.of(path: plugin)), hash: withHash ? ContentHash.text(bytes.withUnsafeBytes(ContentHash.of)) : nil,
            result: old.result, details: old.details)
        #expect(registry.save(entries) == nil)
    }

    /// Alpha discovered (its scan cached), then replaced by a C library that
    /// is no Swift plugin, and the cache entry forged to vouch for it.
    func cacheVouchingForANonPlugin() throws -> (TemporaryDirectory, TemporaryDirectory) {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let plugin = try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        try withHost(.with(pluginsDirectory: dir.path, cacheDirectory: cache.path), declaring: false) { _ = try $0.discover() }
        unlink(plugin)
        try FileManager.default.copyItem(at: Fixtures.library("CMarker"), to: URL(fileURLWithPath: plugin))
        try forgeCacheEntry(cache: cache.path, plugin: plugin)
        return (dir, cache)
    }

    @Test func aForgedCacheEntryCannotBringInBytesThatFailAStaticCheck() throws {
        let (dir, cache) = try cacheVouchingForANonPlugin()

        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        host.declare(Commands.self)
        #expect(try host.discover().map(\.status) == [.available], "the forged entry is believed as a hint")
        #expect(host.lastDiscovery.cacheHits == 1)
        host.activateAll()
        defer { host.shutdown() }
        #expect(host.records.last?.code == "not-swift-plugin", "\(host.records.map { $0.code ?? "" })")
        #expect(host.activePluginIDs.isEmpty)
    }

    @Test func aForgedCacheEntryCannotBringInBytesTheLockRefuses() throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let plugin = try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        let lock = LockFile.defaultPath(for: dir.path)
        try writeLockFile(lock, listing: [(plugin, "fixture.alpha")])
        let first = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path, lockFile: lock))
        _ = try first.discover()
        first.shutdown()
        // Another build of a good plugin (Beta's bytes under Alpha's name): it
        // passes every static check, but not the lock.
        unlink(plugin)
        try FileManager.default.copyItem(at: Fixtures.library("Beta"), to: URL(fileURLWithPath: plugin))
        try forgeCacheEntry(cache: cache.path, plugin: plugin)
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path, lockFile: lock))
        host.declare(Commands.self)
        let records = try host.loadAll()
        defer { host.shutdown() }
        #expect(records.map(\.code) == ["lock-hash-mismatch"])
        #expect(host.activePluginIDs.isEmpty)
    }

    /// An entry that names no content hash vouches for no bytes: even a good
    /// plugin's bytes are refused under it, and the entry is forgotten.
    @Test func aCacheEntryWithoutAHashVouchesForNoBytes() throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let plugin = try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        try withHost(.with(pluginsDirectory: dir.path, cacheDirectory: cache.path)) { host in _ = try host.discover() }
        try forgeCacheEntry(cache: cache.path, plugin: plugin, withHash: false)
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        host.declare(Commands.self)
        #expect(try host.discover().map(\.status) == [.available])
        host.activateAll()
        #expect(host.records.last?.code == "file-changed")
        #expect(host.activePluginIDs.isEmpty)
        host.shutdown()
        let next = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        defer { next.shutdown() }
        #expect(try next.discover().map(\.status) == [.available])
        #expect(next.lastDiscovery.filesScanned == 1, "the entry was forgotten and the file scanned again")
    }

    /// A cache directory others can write is not used: one warning names it
    /// and the fix, and a forged entry in it is never read.
    @Test func aCacheDirectoryOthersCanWriteIsNotUsed() throws {
        let (dir, cache) = try cacheVouchingForANonPlugin()
        chmod(cache.path, 0o777)

        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        let records = try host.discover()
        defer { host.shutdown() }
        #expect(records.map(\.code) == ["not-swift-plugin"], "scanned, not taken from the forged entry")
        #expect(host.lastDiscovery.cacheHits == 0)
        let warnings = host.diagnostics.filter { $0.code == "cache-directory-untrusted" }
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.contains(cache.path) == true && warnings.first?.message.contains("chmod go-w") == true,
                "\(warnings.first?.message ?? "")")
    }

    /// Without HOME and XDG_CACHE_HOME the cache is the user's home from the
    /// user database; without that either, a folder of this user's own under
    /// the temp directory.
    @Test func theDefaultCacheDirectoryFollowsXDGThenHOMEThenTheUserDatabase() throws {
        #expect(StateDirectory.defaultPath(environment: ["XDG_CACHE_HOME": "/x", "HOME": "/h"], home: "/p") == "/x/plugboard")
        #expect(StateDirectory.defaultPath(environment: ["HOME": "/h"], home: "/p") == "/h/.cache/plugboard")
        #expect(StateDirectory.defaultPath(environment: [:], home: "/p") == "/p/.cache/plugboard")
        #expect(StateDirectory.defaultPath(environment: [:], home: nil, temporary: "/t") == "/t/plugboard-cache-\(geteuid())")
    }

    /// Another user made `<temp>/plugboard-cache-<uid>` first: it is not
    /// used; a folder made for this process, ours alone, is, and one
    /// warning says so.
    @Test(.enabled(if: geteuid() == 0, "making a folder of another user needs root"))
    func aFallbackCacheFolderAnotherUserMadeFirstIsNotUsed() throws {
        let temporary = try TemporaryDirectory()
        chmod(temporary.path, 0o1777)  // as /tmp
        let squatted = temporary.file("plugboard-cache-\(geteuid())")
        try FileManager.default.createDirectory(atPath: squatted, withIntermediateDirectories: false)
        chown(squatted, 65534, 65534)
        chmod(squatted, 0o777)
        var warnings: [HostDiagnostic] = []
        let (path, trusted) = StateDirectory.defaultDirectory(
            environment: [:], home: nil, temporary: temporary.path, report: { warnings.append($0) })
        #expect(path != squatted && path.hasPrefix(squatted + "-") && trusted)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_uid == geteuid() && info.st_mode & 0o077 == 0)
        #expect(warnings.map(\.code) == ["cache-directory-untrusted"])
        #expect(warnings.first?.message.contains(squatted) == true && warnings.first?.message.contains("for this process only") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: squatted).isEmpty, "nothing written in the other user's folder")
    }

    /// A plugin whose needed libraries or run path lead outside the folder
    /// of its checked copy (`$ORIGIN/..` is the shared temp directory of the
    /// private copies, `/tmp/x.so` anyone's) is refused from its bytes.
    @Test(arguments: ["run path", "empty run path entry", "needed path"])
    func aLibraryPathOutsideTheCopysFolderIsRefused(_ kind: String) throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let plugin = try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plugin)))
        let image = try bytes.withUnsafeBytes { try ELFImage.parse($0) }
        if kind == "run path" {
            let original = image.runpath.joined(separator: ":")
            let tail = ":$ORIGIN"
            try #require(original.count >= 10 + tail.count, "\(original)")
            let escaping = "$ORIGIN/.." + String(repeating: "/", count: original.count - 10 - tail.count) + tail
            try patchBytes(at: plugin, replacing: Array(original.utf8), with: Array(escaping.utf8))
        } else if kind == "empty run path entry" {
            // An empty entry is the working directory to the dynamic loader.
            let original = image.runpath.joined(separator: ":")
            let empty = "$ORIGIN" + String(repeating: ":", count: original.count - "$ORIGIN".count)
            try patchBytes(at: plugin, replacing: Array(original.utf8), with: Array(empty.utf8))
        } else {
            try #require(image.needed.contains("libm.so.6"), "\(image.needed)")
            try patchBytes(at: plugin, replacing: Array("libm.so.6".utf8), with: Array("/tmp/x.so".utf8))
        }
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        defer { host.shutdown() }
        let record = try #require(try host.discover().first)
        #expect(record.code == "unsafe-library-path", "\(record.code ?? "") \(record.reason ?? "")")
        let named = ["run path": "$ORIGIN/..", "empty run path entry": "an empty entry (the working directory)", "needed path": "/tmp/x.so"][kind]!
        #expect(record.reason?.contains(named) == true, "\(record.reason ?? "")")
        #expect(host.lastDiscovery.filesScanned == 0, "refused before any scan")
    }
}
