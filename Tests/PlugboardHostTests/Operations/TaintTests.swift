import Foundation
import Plugboard
import PlugboardHost
import Testing

/// A host that ran code it could not verify says so, and every quarantine
/// made while it did carries the taint.
@Suite struct TaintTests {
    /// Directory checks off: tainted, reported once, stamped on a scan
    /// quarantine; with the checks on, neither.
    @Test(arguments: [false, true]) func directoryChecksOffTaintTheHost(checksOff: Bool) throws {
        let dir = try TemporaryDirectory()
        _ = try dir.copy(Fixtures.library("Alpha"), as: "alpha.so")
        _ = try dir.copy(Fixtures.library("EntryAbort"), as: "abort.so")
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path, cacheDirectory: dir.file("cache"), trust: checksOff ? .unenforced : .enforced))
        defer { host.shutdown() }
        host.declare(Commands.self)
        try host.start()
        let quarantine = try #require(host.records.first { $0.path.hasSuffix("/abort.so") }?.quarantine)
        if checksOff {
            #expect(host.taint.map(\.code) == ["directory-checks-off"])
            #expect(host.diagnostics.filter { $0.code == "host-tainted" }.count == 1)
            #expect(quarantine.taint == ["directory-checks-off"])
        } else {
            #expect(host.taint.isEmpty)
            #expect(quarantine.taint == nil)
        }
    }

    /// A crash in a tainted process: the next start's quarantine (from the
    /// crash journal) says the process was tainted; `list` shows the taint.
    @Test func aCrashJournalNoteCarriesTheTaintOfTheProcessThatCrashed() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        _ = try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        _ = try dir.copy(Fixtures.library("CommandFatal"), as: "bad.so")
        let options = ["--plugins", dir.path, "--cache", work.file("cache"), "--data", work.file("data")]
        let crashed = try runProcess(Fixtures.executable("plugboard"), ["run", "boom", "--allow-unsafe-directories"] + options,
                                     environment: ["SWIFT_BACKTRACE": "enable=no"])
        #expect(crashed.status != 0)
        // The next start has the checks on: the quarantine says the crashed process had them off.
        let list = try runProcess(Fixtures.executable("plugboard"), ["list", "--json"] + options)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        #expect((document["taint"] as? [Any])?.isEmpty == true)
        let bad = try #require((document["plugins"] as? [[String: Any]])?.first { ($0["path"] as? String)?.hasSuffix("/bad.so") == true })
        #expect((bad["quarantine"] as? [String: Any])?["taint"] as? [String] == ["directory-checks-off"], "\(bad)")
        let text = try runProcess(Fixtures.executable("plugboard"), ["list", "--allow-unsafe-directories"] + options)
        #expect(text.stdout.contains("Tainted (directory-checks-off):"))
    }
}
