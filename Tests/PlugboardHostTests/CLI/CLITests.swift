import Foundation
import PlugboardHost
import Testing

/// The `plugboard` command-line contract, run as a real process.
@Suite struct CLITests {
    func plugboard(_ arguments: String...) throws -> ProcessResult {
        try runProcess(Fixtures.executable("plugboard"), arguments, environment: ["NO_COLOR": "1"])
    }

    func directoryWithOneGoodAndOneBad() throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.write(Data("not a plugin".utf8), as: "b.so")
        return dir
    }

    @Test func listJSONHasOneEntryPerCandidateWithTheContractKeys() throws {
        let dir = try directoryWithOneGoodAndOneBad(), cache = try TemporaryDirectory()
        let result = try plugboard("list", "--plugins", dir.path, "--cache", cache.path, "--json")
        #expect(result.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let plugins = try #require(json["plugins"] as? [[String: Any]])
        #expect(plugins.count == 2)
        let good = plugins[0], bad = plugins[1]
        #expect(good["path"] as? String == dir.file("a.so"))
        #expect(good["status"] as? String == "available")
        #expect(good["id"] as? String == "fixture.alpha")
        #expect(good["version"] as? String == "1.0.0")
        let provides = try #require(good["provides"] as? [[String: String]])
        #expect(provides == [["interface": "plugboard.command", "version": "1.0.0"]])
        #expect(bad["status"] as? String == "rejected")
        #expect(bad["code"] as? String == "not-elf")
        #expect((bad["reason"] as? String)?.isEmpty == false)
    }

    /// A second `list` answers from the registry cache: it opens no plugin
    /// file (the host's counter).
    @Test func aWarmListOpensNoPluginFile() throws {
        let dir = try directoryWithOneGoodAndOneBad()
        let cache = try TemporaryDirectory()
        let cold = try plugboard("list", "--plugins", dir.path, "--cache", cache.path, "--json")
        let coldJSON = try #require(try JSONSerialization.jsonObject(with: Data(cold.stdout.utf8)) as? [String: Any])
        #expect((coldJSON["discovery"] as? [String: Any])?["filesRead"] as? Int == 2)
        let warm = try plugboard("list", "--plugins", dir.path, "--cache", cache.path, "--json")
        let warmJSON = try #require(try JSONSerialization.jsonObject(with: Data(warm.stdout.utf8)) as? [String: Any])
        let counts = (warmJSON["discovery"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int }
        #expect(counts == ["cacheHits": 2, "filesRead": 0, "filesScanned": 0, "scannerProcesses": 0])
        #expect((warmJSON["plugins"] as? [[String: Any]])?.map { $0["status"] as? String } == ["available", "rejected"])
    }

    /// The kernel's view of a warm `list`: no plugin file opened. Needs
    /// strace (`make test` installs it, or stops saying how); skipped, and
    /// shown skipped, only by a plain `swift test` without it and without `CI`.
    @Test(.enabled(if: Tools.strace != nil || Tools.isCI, "strace is not installed (apt-get install strace)"))
    func aWarmListOpensNoPluginFileAsTheKernelSeesIt() throws {
        let dir = try directoryWithOneGoodAndOneBad()
        let cache = try TemporaryDirectory()
        #expect(try plugboard("list", "--plugins", dir.path, "--cache", cache.path).status == 0)
        let strace = try #require(Tools.strace, "strace is not installed (apt-get install strace)")
        let log = cache.file("strace.log")
        let traced = try runProcess(strace, ["-f", "-e", "trace=open,openat", "-o", log,
                                             try Fixtures.executable("plugboard").path, "list", "--plugins", dir.path, "--cache", cache.path])
        #expect(traced.status == 0)
        let opens = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.contains(dir.path) }
        // The directory itself is opened (listed): the trace saw the walk.
        #expect(!opens.isEmpty)
        #expect(opens.allSatisfy { $0.contains("O_DIRECTORY") }, "\(opens)")
    }

    @Test func strictExitsOneWhenAFileWasRejected() throws {
        let dir = try directoryWithOneGoodAndOneBad(), cache = try TemporaryDirectory()
        #expect(try plugboard("list", "--plugins", dir.path, "--cache", cache.path).status == 0)
        #expect(try plugboard("list", "--plugins", dir.path, "--cache", cache.path, "--strict").status == 1)
        let clean = try TemporaryDirectory()
        try clean.copy(Fixtures.library("Alpha"), as: "a.so")
        #expect(try plugboard("list", "--plugins", clean.path, "--cache", cache.path, "--strict").status == 0)
    }

    @Test func humanListShowsStatusIDAndReasonWithCode() throws {
        let dir = try directoryWithOneGoodAndOneBad(), cache = try TemporaryDirectory()
        let out = try plugboard("list", "--plugins", dir.path, "--cache", cache.path).stdout
        #expect(out.contains("available  fixture.alpha  1.0.0"))
        #expect(out.contains("b.so: [not-elf] not an ELF shared object"))
    }

    /// Plugins of a host's own points (interfaces the tool does not
    /// declare) are summed up in one line, not a warning per plugin;
    /// `--json` keeps each plugin's warning.
    @Test func interfacesTheToolDoesNotDeclareAreOneLineNotAWarningPerPlugin() throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Undeclared"), as: "u.so")
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let out = try plugboard("list", "--plugins", dir.path, "--cache", cache.path).stdout
        #expect(!out.contains("[warning]") && !out.contains("Problems"), "\(out)")
        #expect(out.contains("Interfaces plugboard does not declare (a host's own points; that host checks their versions): fixture.unknown (1 plugin)"), "\(out)")
        let json = try plugboard("list", "--plugins", dir.path, "--cache", cache.path, "--json").stdout
        #expect(json.components(separatedBy: "which this host does not declare").count - 1 == 1)
    }

    struct UsageCase: Sendable, CustomStringConvertible {
        let arguments: [String]
        let message: String
        var description: String { arguments.joined(separator: " ") }
    }

    static let usageCases: [UsageCase] = [
        .init(arguments: ["list"], message: "missing '--plugins <dir>'"),
        .init(arguments: ["list", "--plugin", "x"], message: "did you mean '--plugins'?"),
        .init(arguments: ["list", "--plugins"], message: "missing value for '--plugins <dir>'"),
        .init(arguments: ["list", "--plugins", "x", "extra"], message: "unexpected argument 'extra'"),
        .init(arguments: ["inspect"], message: "missing <file>"),
        .init(arguments: ["lsit"], message: "did you mean 'list'?"),
        .init(arguments: ["list", "--json=yes", "--plugins", "x"], message: "'--json' takes no value"),
        .init(arguments: [], message: "USAGE"),
        .init(arguments: ["list", "--plugins="], message: "empty value for '--plugins <dir>'"),
        .init(arguments: ["list", "--plugins", "--json"], message: "missing value for '--plugins <dir>'"),
        .init(arguments: ["list", "--plugins", "x", "--scan-timeout", "0"], message: "'--scan-timeout' takes seconds between 0 and 3600, got '0'"),
        .init(arguments: ["run", "x", "--plugins", "x", "--resource-bounds", "strict"], message: "'--resource-bounds' takes best-effort or required, got 'strict'"),
        // An expiry past year 9999 could not be written in the signed comment.
        .init(arguments: ["lock", "--plugins", "x", "--sign", "k", "--expires-days", "inf"], message: "at most 36500, got 'inf'"),
    ]

    @Test(arguments: usageCases)
    func usageErrorsExit64WithAMessageAndTheUsageLine(_ testCase: UsageCase) throws {
        let result = try runProcess(Fixtures.executable("plugboard"), testCase.arguments, environment: ["NO_COLOR": "1"])
        #expect(result.status == 64)
        #expect(result.stderr.contains(testCase.message), "\(result.stderr)")
        #expect(result.stderr.contains("USAGE: plugboard"), "\(result.stderr)")
    }

    @Test(arguments: [["--help"], ["list", "--help"], ["inspect", "-h"], ["help"]])
    func helpExitsZeroOnStdout(_ arguments: [String]) throws {
        let result = try runProcess(Fixtures.executable("plugboard"), arguments)
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: plugboard"))
    }

    /// Two plugins providing one command name: the first by plugin id runs,
    /// and a warning names both and the rule.
    @Test func aCommandTwoPluginsProvideRunsTheFirstByIDAndSaysSo() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Gamma"), as: "b.so")
        // The same plugin under another id (same length): both provide `gamma`.
        let rival = try dir.copy(Fixtures.library("Gamma"), as: "a.so")
        try patchBytes(at: rival, replacing: Array("fixture.gamma".utf8), with: Array("fixture.gammb".utf8))
        let result = try plugboard("run", "gamma", "--plugins", dir.path, "--cache", work.file("cache"), "--data", work.file("data"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "gamma\n", "\(result.stdout)")
        let warning = result.stderr.split(separator: "\n").filter { $0.contains("[duplicate-command]") }
        #expect(warning.count == 1, "\(result.stderr)")
        #expect(warning.first?.contains("fixture.gamma, fixture.gammb; fixture.gamma runs (the first by plugin id)") == true, "\(result.stderr)")
    }

    /// After a command crashed the host, the next start says the plugin is
    /// quarantined once, not as an error and again as a warning.
    @Test func aQuarantineAfterACrashIsSaidOnce() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library("CommandFatal"), as: "bad.so")
        let options = ["--plugins", dir.path, "--cache", work.file("cache"), "--data", work.file("data")]
        let crashed = try runProcess(Fixtures.executable("plugboard"), ["run", "boom"] + options, environment: ["SWIFT_BACKTRACE": "enable=no"])
        #expect(crashed.status != 0)
        let next = try runProcess(Fixtures.executable("plugboard"), ["run", "alpha"] + options)
        #expect(next.status == 0, "\(next.stderr)")
        let lines = next.stderr.split(separator: "\n").filter { $0.contains(dir.file("bad.so")) && $0.contains("quarantined") }
        #expect(lines.count == 1, "\(next.stderr)")
    }

    /// A quarantine from the crash journal holds for every host kind that
    /// shares the state directory, whichever read the dead host's note: a
    /// copy of the tool (its own libPlugboard.so, so its own registry cache
    /// partition, as a server's) consumes the note; the tool then lists the
    /// plugin quarantined too, and a rescan by either lifts it for both.
    @Test func aJournalQuarantineHoldsForEveryHostOfTheStateDirectory() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory(), other = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library("CommandFatal"), as: "bad.so")
        let tool = try Fixtures.executable("plugboard")
        let folder = tool.deletingLastPathComponent()
        for name in ["plugboard", "libPlugboard.so", "libDemoInterfaces.so"] {
            try FileManager.default.copyItem(atPath: folder.appendingPathComponent(name).path, toPath: other.file(name))
        }
        let options = ["--plugins", dir.path, "--cache", work.file("cache"), "--data", work.file("data")]
        func status(_ program: String, _ extra: [String] = []) throws -> String? {
            let listed = try runProcess(URL(fileURLWithPath: program), ["list", "--json"] + options + extra)
            let records = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any]
            let plugins = records?["plugins"] as? [[String: Any]]
            let bad = plugins?.first { ($0["path"] as? String)?.hasSuffix("bad.so") == true }
            return (bad?["code"] as? String) ?? (bad?["status"] as? String)
        }
        #expect(try status(tool.path) == "available")
        let crashed = try runProcess(tool, ["run", "boom"] + options, environment: ["SWIFT_BACKTRACE": "enable=no"])
        #expect(crashed.status != 0)
        // The copy reads the note (its own partition of the cache).
        #expect(try status(other.file("plugboard")) == "host-crashed")
        #expect(try status(tool.path) == "host-crashed", "the tool sees the quarantine the copy decided")
        #expect(try status(tool.path, ["--rescan"]) == "available")
        #expect(try status(other.file("plugboard")) == "available", "the rescan lifted it for the copy too")
    }

    /// A shared quarantine record that cannot be read lifts nothing: the
    /// host that decided the quarantine keeps it in its own cache (only a
    /// rescan's mark lifts it).
    @Test func anUnreadableSharedQuarantineRecordLiftsNothing() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library("CommandFatal"), as: "bad.so")
        let options = ["--plugins", dir.path, "--cache", work.file("cache"), "--data", work.file("data")]
        func status() throws -> String? {
            let listed = try runProcess(try Fixtures.executable("plugboard"), ["list", "--json"] + options)
            let json = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any]
            let bad = (json?["plugins"] as? [[String: Any]])?.first { ($0["path"] as? String)?.hasSuffix("bad.so") == true }
            return (bad?["code"] as? String) ?? (bad?["status"] as? String)
        }
        let crashed = try runProcess(try Fixtures.executable("plugboard"), ["run", "boom"] + options, environment: ["SWIFT_BACKTRACE": "enable=no"])
        #expect(crashed.status != 0)
        #expect(try status() == "host-crashed")
        // The record becomes something no host can read or replace.
        let record = work.file("cache/quarantined.json")
        try FileManager.default.removeItem(atPath: record)
        try FileManager.default.createDirectory(atPath: record + "/in-the-way", withIntermediateDirectories: true)
        #expect(try status() == "host-crashed")
    }

    /// A journal note's quarantine that cannot be written to the shared
    /// record is kept in the reading host's own cache, with a warning
    /// naming the record (`cache-unwritable`).
    @Test func aQuarantineTheSharedRecordCannotTakeIsKeptAndReported() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        try dir.copy(Fixtures.library("CommandFatal"), as: "bad.so")
        let options = ["--plugins", dir.path, "--cache", work.file("cache"), "--data", work.file("data")]
        let crashed = try runProcess(try Fixtures.executable("plugboard"), ["run", "boom"] + options, environment: ["SWIFT_BACKTRACE": "enable=no"])
        #expect(crashed.status != 0)
        let record = work.file("cache/quarantined.json")
        try FileManager.default.createDirectory(atPath: record + "/in-the-way", withIntermediateDirectories: true)
        let listed = try runProcess(try Fixtures.executable("plugboard"), ["list"] + options)
        #expect(listed.stderr.contains("[cache-unwritable]") && listed.stderr.contains(record))
        #expect(listed.stdout.contains("host-crashed"))
    }

    @Test func unreadableDirectoryExitsOne() throws {
        let cache = try TemporaryDirectory()
        let result = try plugboard("list", "--plugins", "/nonexistent/plugins", "--cache", cache.path)
        #expect(result.status == 1)
        #expect(result.stderr.contains("/nonexistent/plugins: cannot open plugins directory"))
    }

    @Test func inspectExplainsARejectionAndExitsOne() throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let path = try dir.copy(Fixtures.futureLibrary("FutureAPI"), as: "future.so")
        let host = Fixtures.baseline.sdkABI, future = "\(host.major).\(host.minor + 1)"
        let text = try plugboard("inspect", path, "--cache", cache.path)
        #expect(text.status == 1)
        #expect(text.stdout.contains("missing-sdk-symbols"))
        #expect(text.stdout.contains("Plugboard.futureOnlyAPI"))
        #expect(text.stdout.contains("SDK ABI (file)    \(future)"))
        let json = try plugboard("inspect", path, "--json", "--cache", cache.path)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["code"] as? String == "missing-sdk-symbols")
        #expect((object["file"] as? [String: Any])?["sdkABI"] as? String == future)
    }

    @Test func devOnSomethingThatIsNotAPluginPackageExitsOne() throws {
        let empty = try TemporaryDirectory()
        let result = try plugboard("dev", empty.path)
        #expect(result.status == 1)
        #expect(result.stderr.contains("no Package.swift"))
        #expect(result.stderr.contains("[dev-not-a-package]"))
    }

    @Test func inspectOfAGoodPluginExitsZero() throws {
        let cache = try TemporaryDirectory()
        let result = try plugboard("inspect", Fixtures.library("Alpha").path, "--json", "--cache", cache.path)
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["status"] as? String == "available")
        #expect((object["sdk"] as? [String: String])?["abi"] == Fixtures.baseline.sdkABI.description)
        let activated = try plugboard("inspect", "--activate", Fixtures.library("Alpha").path, "--json", "--cache", cache.path)
        #expect(activated.status == 0)
        let active = try #require(try JSONSerialization.jsonObject(with: Data(activated.stdout.utf8)) as? [String: Any])
        #expect(active["status"] as? String == "active")
        let failing = try plugboard("inspect", "--activate", Fixtures.library("InitThrows").path, "--json", "--cache", cache.path)
        #expect(failing.status == 1)
    }
}

extension SwiftPMBuilding {
    /// `plugboard new`: the scaffold builds and loads as is.
    @Suite struct NewCommandTests {
        @Test func aScaffoldedPluginBuildsAndLoads() throws {
            let dir = try TemporaryDirectory("plugboard-new")
            let sdk = Fixtures.repository.appendingPathComponent("SDK").path
            let created = try runProcess(Fixtures.executable("plugboard"), ["new", "Hello", "--dir", dir.path, "--sdk-path", sdk])
            #expect(created.status == 0, "\(created.stderr)")
            let package = dir.file("Hello")
            // In the example plugins' build folder, where the SDK they share
            // is compiled already (with the flags make uses): only the
            // scaffold compiles, warnings as errors.
            let builds = Fixtures.repository.appendingPathComponent(".build/examples").path
            let build = try runProcess(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["swift", "build", "--build-tests", "--package-path", package, "--scratch-path", builds, "-Xswiftc", "-warnings-as-errors"])
            #expect(build.status == 0, "\(build.stdout)\(build.stderr)")
            // Its own test, written with PluginHarness, passes as scaffolded.
            let test = try runProcess(
                URL(fileURLWithPath: "/usr/bin/env"), ["swift", "test", "--skip-build", "--package-path", package, "--scratch-path", builds])
            #expect(test.status == 0, "\(test.stdout)\(test.stderr)")
            #expect(test.stdout.contains("2 tests"), "\(test.stdout)")
            let plugins = try TemporaryDirectory(), cache = try TemporaryDirectory()
            try plugins.copy(URL(fileURLWithPath: builds + "/debug/libHello.so"), as: "libHello.so")
            let run = try runProcess(Fixtures.executable("plugboard"), ["run", "hello", "--plugins", plugins.path, "--cache", cache.path, "--", "Ada"])
            #expect(run.stdout == "Hello from Hello, Ada!\n", "\(run.stderr)")
            #expect(try runProcess(Fixtures.executable("plugboard"), ["new", "Hello", "--dir", dir.path, "--sdk", sdk]).status == 1)
            #expect(try runProcess(Fixtures.executable("plugboard"), ["new", "9lives", "--sdk", sdk]).status == 64)
            // --uses-interface needs an interface package: the message says what is missing.
            let notPackage = try runProcess(Fixtures.executable("plugboard"), ["new", "Other", "--dir", dir.path, "--sdk", sdk, "--uses-interface", dir.path])
            #expect(notPackage.status == 64 && notPackage.stderr.contains("no readable Package.swift"), "\(notPackage.stderr)")
            let noPoint = try runProcess(Fixtures.executable("plugboard"), ["new", "Other", "--dir", dir.path, "--sdk", sdk, "--uses-interface", package])
            #expect(noPoint.status == 64 && noPoint.stderr.contains("declares no public ExtensionPoint"), "\(noPoint.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("Other")), "nothing written on a usage error")
        }
    }
}
