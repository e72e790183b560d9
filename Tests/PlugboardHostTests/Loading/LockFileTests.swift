import Foundation
import Plugboard
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Testing

/// A lock file: only listed files whose bytes hash to the recorded SHA-256
/// load; anything else is refused before any of its code runs.
@Suite struct LockFileTests {
    func lockedDirectory() throws -> (TemporaryDirectory, String) {
        let dir = try TemporaryDirectory()
        let files = try [("Alpha", "fixture.alpha"), ("Beta", "fixture.beta")].map { name, id in
            (path: try dir.copy(Fixtures.library(name), as: "lib\(name).so"), id: id)
        }
        let lock = LockFile.defaultPath(for: dir.path)
        try writeLockFile(lock, listing: files)
        return (dir, lock)
    }

    /// A host on `dir` under `lock`; the caller shuts it down.
    func host(_ dir: TemporaryDirectory, lock: String, cache: TemporaryDirectory) -> PluginHost {
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path, lockFile: lock))
        host.declare(Commands.self)
        return host
    }

    @Test func aTamperedFileIsRefusedWithTheExpectedAndFoundHash() throws {
        let (dir, lock) = try lockedDirectory()
        let cache = try TemporaryDirectory()
        // Warm the cache first: a locked host hashes cached files too.
        try withHost(.with(pluginsDirectory: dir.path, cacheDirectory: cache.path, lockFile: lock), declaring: false) { warm in
            warm.declare(Commands.self)
            _ = try warm.discover()
        }
        try patchBytes(at: dir.file("libBeta.so"), replacing: Array("echo from".utf8), with: Array("ECHO FROM".utf8))
        let host = host(dir, lock: lock, cache: cache)
        defer { host.shutdown() }
        let records = try host.loadAll()
        let beta = try #require(records.first { $0.path.hasSuffix("libBeta.so") })
        #expect(beta.code == "lock-hash-mismatch")
        #expect(beta.reason?.contains("expects") == true && beta.reason?.contains("its SHA-256 is") == true, "\(beta.reason ?? "")")
        #expect(host.activePluginIDs == ["fixture.alpha"], "the good plugin still loads")
    }

    @Test func aFileNotInTheLockFileIsRefused() throws {
        let (dir, lock) = try lockedDirectory()
        try dir.copy(Fixtures.library("Gamma"), as: "libGamma.so")
        let cache = try TemporaryDirectory()
        let host = host(dir, lock: lock, cache: cache)
        defer { host.shutdown() }
        let records = try host.loadAll()
        #expect(records.first { $0.path.hasSuffix("libGamma.so") }?.code == "not-locked")
        #expect(host.activePluginIDs == ["fixture.alpha", "fixture.beta"])
    }

    @Test func anUnreadableLockFileRefusesEveryPluginAndSaysHowToWriteIt() throws {
        let (dir, lock) = try lockedDirectory()
        try Data("not json".utf8).write(to: URL(fileURLWithPath: lock))
        let cache = try TemporaryDirectory()
        let host = host(dir, lock: lock, cache: cache)
        defer { host.shutdown() }
        let records = try host.loadAll()
        #expect(records.map(\.code) == ["lock-file-invalid", "lock-file-invalid"])
        #expect(records.first?.reason?.contains("plugboard lock --plugins DIR") == true)
        #expect(host.activePluginIDs.isEmpty)
    }

    @Test func plugboardLockWritesWhatLockedHostsAccept() throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        try dir.copy(Fixtures.library("NoEntry"), as: "libNoEntry.so")
        let locked = try runProcess(Fixtures.executable("plugboard"), ["lock", "--plugins", dir.path, "--cache", cache.path])
        #expect(locked.status == 0, "\(locked.stderr)")
        #expect(locked.stderr.contains("left out: \(dir.file("libNoEntry.so")) (rejected: no-entry-symbol)"))
        let file = try LockFile.load(LockFile.defaultPath(for: dir.path))
        #expect(file.plugins.map(\.file) == ["libAlpha.so"])
        // Version 3: each file's size, which bounds what a pull reads of it.
        let size = try FileManager.default.attributesOfItem(atPath: dir.file("libAlpha.so"))[.size] as? Int
        #expect(file.lockVersion == 3 && file.plugins.first?.size == size, "\(file)")
        let list = try runProcess(Fixtures.executable("plugboard"), ["list", "--plugins", dir.path, "--cache", cache.path, "--locked", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        let codes = (object["plugins"] as? [[String: Any]])?.map { $0["code"] as? String ?? $0["status"] as? String ?? "" }
        // Under a lock file, a file it does not list is refused before it is read.
        #expect(codes == ["available", "not-locked"], "\(list.stdout)")
        #expect((object["discovery"] as? [String: Any])?["filesRead"] as? Int == 1, "\(list.stdout)")
    }

    /// A version 2 lock file (no sizes) is still read; a version this host
    /// does not know is refused, naming it and the fix.
    @Test func anOlderLockVersionIsReadAndANewerOneRefused() throws {
        let older = try LockFile.decode(Data(#"{"lockVersion": 2, "plugins": [{"file": "a.so", "id": "a", "version": "1.0.0", "sha256": "00"}]}"#.utf8), path: "old.lock")
        #expect(older.plugins.first?.size == nil && older.plugins.first?.sha256 == "00")
        let error = #expect(throws: PluginLoadError.self) {
            try LockFile.decode(Data(#"{"lockVersion": 4, "plugins": []}"#.utf8), path: "new.lock")
        }
        #expect(error?.code == .lockFileInvalid)
        #expect(error?.reason.contains("lock version 4, written by a newer Plugboard") == true, "\(String(describing: error?.reason))")
    }
}
