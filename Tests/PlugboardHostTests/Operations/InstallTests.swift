import Foundation
import Plugboard
import PlugboardHost
import Testing

/// `plugboard install`: checked before the directory is touched, renamed
/// into place, the lock entry updated.
@Suite struct InstallTests {
    func listing(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    @Test func aGoodFileIsInstalledAndLockedABadOneLeavesTheDirectoryAlone() throws {
        let dir = try TemporaryDirectory()
        let plugins = dir.file("plugins")
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try dir.copy(Fixtures.library("Alpha"), as: "plugins/alpha.so")
        let options = ["--plugins", plugins, "--cache", dir.file("cache")]
        #expect(try runProcess(Fixtures.executable("plugboard"), ["lock"] + options).status == 0)

        let installed = try runProcess(Fixtures.executable("plugboard"), ["install", Fixtures.library("Gamma").path, "--as", "gamma.so", "--json"] + options)
        #expect(installed.status == 0, "\(installed.stderr)")
        struct Report: Decodable { let id: String; let sha256: String; let lockUpdated: Bool }
        let report = try JSONDecoder().decode(Report.self, from: Data(installed.stdout.utf8))
        #expect(report.id == "fixture.gamma")
        #expect(report.lockUpdated)
        #expect(try listing(plugins) == ["alpha.so", "gamma.so", "plugboard.lock"])  // no temporary file left
        let lock = try String(contentsOfFile: "\(plugins)/plugboard.lock", encoding: .utf8)
        #expect(lock.contains("\"gamma.so\"") && lock.contains(report.sha256))
        // A host that enforces the lock admits the installed file.
        let locked = try runProcess(Fixtures.executable("plugboard"), ["list", "--locked", "--json"] + options)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(locked.stdout.utf8)) as? [String: Any])
        let statuses = (document["plugins"] as? [[String: Any]] ?? []).map { "\($0["id"] ?? "-") \($0["status"] ?? "-")" }.sorted()
        #expect(statuses == ["fixture.alpha available", "fixture.gamma available"])

        let before = try listing(plugins)
        let lockBefore = try Data(contentsOf: URL(fileURLWithPath: "\(plugins)/plugboard.lock"))
        let bad = dir.file("notes.so")
        _ = FileManager.default.createFile(atPath: bad, contents: Data("not a plugin".utf8))
        let refused = try runProcess(Fixtures.executable("plugboard"), ["install", bad] + options)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("[not-elf]") && refused.stderr.contains("nothing was installed"))
        #expect(try listing(plugins) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(plugins)/plugboard.lock")) == lockBefore)
        #expect(try runProcess(Fixtures.executable("plugboard"), ["install", bad, "--as", "x.txt"] + options).status == 64)
    }
}

/// A host running under a lock file sees the entry `plugboard install`
/// adds: the lock is read again when it changed.
@Suite struct LockedLiveInstallTests {
    /// Into a plugins directory that does not exist: refused naming it and
    /// how to make it, not a temporary file inside it.
    @Test func installingIntoAMissingDirectorySaysSo() throws {
        let dir = try TemporaryDirectory()
        let missing = dir.file("no-such-plugins")
        let refused = try runProcess(Fixtures.executable("plugboard"), ["install", Fixtures.library("Gamma").path, "--plugins", missing, "--cache", dir.file("cache")])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\(missing): cannot open plugins directory") && refused.stderr.contains("mkdir -p"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func aLockedRunningHostAdmitsAnInstalledFileAfterItsLockEntry() throws {
        let dir = try TemporaryDirectory()
        let plugins = dir.file("plugins")
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try dir.copy(Fixtures.library("Alpha"), as: "plugins/alpha.so")
        let options = ["--plugins", plugins, "--cache", dir.file("tool-cache")]
        #expect(try runProcess(Fixtures.executable("plugboard"), ["lock"] + options).status == 0)
        let host = PluginHost(configuration: .with(
            pluginsDirectory: plugins, cacheDirectory: dir.file("cache"), lockFile: "\(plugins)/plugboard.lock"))
        defer { host.shutdown() }
        host.declare(Commands.self)
        try host.start()
        #expect(host.records.map(\.id) == ["fixture.alpha"])
        // A file copied in without a lock entry stays out...
        _ = try dir.copy(Fixtures.library("Beta"), as: "plugins/.beta.partial")
        #expect(rename(dir.file("plugins/.beta.partial"), dir.file("plugins/beta.so")) == 0)
        #expect(try host.refresh().added.map(\.code) == ["not-locked"])
        // ...one installed with its entry comes in.
        let installed = try runProcess(Fixtures.executable("plugboard"), ["install", Fixtures.library("Gamma").path, "--as", "gamma.so"] + options)
        #expect(installed.status == 0, "\(installed.stderr)")
        let outcome = try host.refresh()
        #expect(outcome.added.map(\.id) == ["fixture.gamma"])
        #expect(outcome.added.first?.status == .available)
    }
}
