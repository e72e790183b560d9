import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost
import Testing

/// Plugin code that crashes, exits or hangs while loading is met in a scanner
/// process: the file is quarantined with the phase, the signal or time limit
/// and its last output, and the good plugins beside it load as if it were
/// not there.
@Suite struct ScannerTests {
    struct Case: Sendable, CustomStringConvertible {
        let fixture: String
        let code: String
        let phase: Quarantine.Phase
        let signal: String?
        var exitStatus: Int32? = nil
        /// Text its stderr tail must contain.
        let output: String
        var description: String { fixture }
    }

    static let cases: [Case] = [
        Case(fixture: "CtorAbort", code: "scan-crashed", phase: .dlopen, signal: "SIGABRT", output: "constructor of CtorAbort"),
        Case(fixture: "EntryAbort", code: "scan-crashed", phase: .entry, signal: "SIGABRT", output: "entry of EntryAbort"),
        Case(fixture: "EntryExit", code: "scan-exited", phase: .entry, signal: nil, exitStatus: 7, output: "exiting with status 7"),
        Case(fixture: "EntryHang", code: "scan-timeout", phase: .entry, signal: nil, output: "entry of EntryHang: never returning"),
        Case(fixture: "Chatty", code: "scan-crashed", phase: .entry, signal: "SIGSEGV", output: "chatty line 200"),
    ]

    static func configuration(_ dir: TemporaryDirectory, cache: String) -> PluginHost.Configuration {
        .with(pluginsDirectory: dir.path, cacheDirectory: cache, scanner: ScannerSettings(timeout: .seconds(2)))
    }

    /// A host on `dir`; the caller shuts it down.
    static func host(_ dir: TemporaryDirectory, cache: String) -> PluginHost {
        let host = PluginHost(configuration: configuration(dir, cache: cache))
        host.declareDemoExtensionPoints()
        return host
    }

    @Test(arguments: cases)
    func aPluginThatDiesWhileScannedIsQuarantinedAndTheOthersLoad(_ testCase: Case) throws {
        let dir = try TemporaryDirectory()
        let cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library("Beta"), as: "c.so")
        let bad = try dir.copy(Fixtures.library(testCase.fixture), as: "b.so")

        let host = Self.host(dir, cache: cache.path)
        defer { host.shutdown() }
        let records = try host.loadAll()
        let record = try #require(records.first { $0.path == bad })
        #expect(record.status == .quarantined)
        #expect(record.code == testCase.code, "\(record.reason ?? "")")
        let quarantine = try #require(record.quarantine)
        #expect(quarantine.phase == testCase.phase)
        #expect(quarantine.signal == testCase.signal)
        #expect(quarantine.exitStatus == testCase.exitStatus)
        #expect(quarantine.milliseconds != nil)
        #expect(quarantine.stderrTail.joined(separator: "\n").contains(testCase.output), "\(quarantine.stderrTail)")
        #expect(quarantine.stderrTail.count <= 5)
        #expect(record.reason?.contains("phase \(testCase.phase == .dlopen ? "constructor/dlopen" : "entry")") == true)
        #expect(record.reason?.contains("--rescan") == true)
        // The good ones load and serve as if it were not there.
        #expect(records.filter { $0.status == .active }.compactMap(\.id).sorted() == ["fixture.alpha", "fixture.beta"])
        #expect(try host.registry.providers(of: Commands.self).map { try $0.run(arguments: ["ok"]) } == ["alpha ok", "beta ok"])
    }

    @Test func aQuarantineLastsUntilTheFileChangesOrARescanIsAsked() throws {
        let dir = try TemporaryDirectory()
        let cache = try TemporaryDirectory()
        let bad = try dir.copy(Fixtures.library("EntryAbort"), as: "bad.so")
        let discovered = try withHost(Self.configuration(dir, cache: cache.path)) { host in try host.discover() }
        let first = try #require(discovered.first)
        #expect(first.code == "scan-crashed")

        // Remembered: the next start does not scan it again.
        let second = Self.host(dir, cache: cache.path)
        defer { second.shutdown() }
        #expect(try second.discover().first?.quarantine == first.quarantine)
        #expect(second.lastDiscovery.filesScanned == 0)
        #expect(second.lastDiscovery.cacheHits == 1)

        // Asked for: scanned again (and quarantined again, with a new scan).
        let retry = Self.host(dir, cache: cache.path)
        defer { retry.shutdown() }
        #expect(try retry.discover(rescan: true).first?.code == "scan-crashed")
        #expect(retry.lastDiscovery.filesScanned == 1)

        // The file replaced by a fixed build: scanned, available.
        try FileManager.default.removeItem(atPath: bad)
        try dir.copy(Fixtures.library("Alpha"), as: "bad.so")
        let fixed = Self.host(dir, cache: cache.path)
        defer { fixed.shutdown() }
        #expect(try fixed.discover().first?.status == .available)
        #expect(fixed.lastDiscovery.filesScanned == 1)
    }

    @Test func filesAreScannedInParallelOnAColdStart() throws {
        let dir = try TemporaryDirectory()
        let cache = try TemporaryDirectory()
        for name in ["Alpha", "Beta", "Gamma", "ProbeA", "ProbeB", "Undeclared"] {
            try dir.copy(Fixtures.library(name), as: "lib\(name).so")
        }
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path, cacheDirectory: cache.path, scanner: ScannerSettings(parallelism: 2)))
        defer { host.shutdown() }
        host.declareDemoExtensionPoints()
        let records = try host.discover()
        #expect(records.allSatisfy { $0.status == .available }, "\(records.map(\.message))")
        #expect(host.lastDiscovery.filesScanned == 6)
        #expect(host.lastDiscovery.scannerProcesses == 2)
    }

    /// A scanner that dies after answering for other files might be dying of
    /// one of them: each is scanned again alone before anyone is blamed.
    @Test func aCrashAfterOtherFilesIsPinnedDownInFreshScanners() throws {
        let dir = try TemporaryDirectory()
        let cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library("Beta"), as: "b.so")
        let bad = try dir.copy(Fixtures.library("EntryAbort"), as: "c.so")
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path, cacheDirectory: cache.path, scanner: ScannerSettings(parallelism: 1)))
        defer { host.shutdown() }
        host.declareDemoExtensionPoints()
        let records = try host.discover()
        #expect(records.map(\.status) == [.available, .available, .quarantined])
        #expect(records.first { $0.path == bad }?.quarantine?.phase == .entry)
        // One scanner for all three, then one fresh scanner per file.
        #expect(host.lastDiscovery.scannerProcesses == 4)
    }

    /// `dlopen` failing in the scanner depends on the machine (a library it
    /// needs may be installed later): reported with the loader's words, and
    /// not remembered, so the next start tries again.
    @Test func aLoadFailureIsReportedButNotCached() throws {
        let dir = try TemporaryDirectory()
        let cache = try TemporaryDirectory()
        let path = try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try patchBytes(at: path, replacing: Array("libswiftGlibc.so".utf8), with: Array("libswiftGlibX.so".utf8))
        let first = Self.host(dir, cache: cache.path)
        defer { first.shutdown() }
        let record = try #require(try first.discover().first)
        #expect(record.code == "load-failed")
        #expect(record.reason?.contains("libswiftGlibX.so") == true, "\(record.reason ?? "")")
        let second = Self.host(dir, cache: cache.path)
        defer { second.shutdown() }
        #expect(try second.discover().first?.code == "load-failed")
        #expect(second.lastDiscovery.filesScanned == 1)
    }

    @Test func aScannerThatCannotStartLeavesFilesUnloadedWithTheFix() throws {
        let dir = try TemporaryDirectory()
        let cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path, cacheDirectory: cache.path, scanner: ScannerSettings(executable: "/bin/true")))
        defer { host.shutdown() }
        host.declareDemoExtensionPoints()
        let record = try #require(try host.loadAll().first)
        #expect(record.code == "scanner-unavailable")
        #expect(record.reason?.contains("/bin/true exited with status 0 before saying hello") == true, "\(record.reason ?? "")")
        #expect(record.reason?.contains("ScannerSettings") == true || record.reason?.contains("Configuration.scanner") == true)
        #expect(host.activePluginIDs.isEmpty)
        // Nothing learned, nothing cached: a working scanner examines it next time.
        let next = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        defer { next.shutdown() }
        #expect(try next.discover().first?.status == .available)
    }

    /// A host that is not `plugboard` scans in copies of itself.
    @Test func anyHostExecutableIsItsOwnScanner() throws {
        let dir = try TemporaryDirectory()
        let cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library("CtorAbort"), as: "b.so")
        try dir.copy(Fixtures.library("EntryAbort"), as: "c.so")
        let result = try runProcess(Fixtures.executable("plugboard-test-host"), [dir.path, cache.path, "--run", "alpha"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == """
            active - fixture.alpha a.so
            quarantined scan-crashed - b.so
            quarantined scan-crashed - c.so
            alpha

            """)
    }

    /// What the probe fixture's constructor saw in the scanner (its
    /// `scan-probe` file, written beside the private copy it was loaded
    /// from: the scanner runs without its sandbox, which would refuse that
    /// write; SandboxTests cover the sandboxed scanner).
    static func probe(_ given: ScannerSettings = ScannerSettings()) throws -> [String] {
        var settings = given
        settings.sandbox = nil
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("ScanProbe"), as: "probe.so")
        let images = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path, imagesDirectory: images.path, cacheDirectory: cache.path, scanner: settings))
        defer { host.shutdown() }
        #expect(try host.discover().first?.status == .available)
        let files = FileManager.default.enumerator(atPath: images.path)?.compactMap { $0 as? String } ?? []
        let seen = try #require(files.first { $0.hasSuffix("scan-probe") }, "the probe's constructor ran in the scanner")
        return try String(contentsOfFile: images.path + "/" + seen, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// What the probe's constructor saw in a scanner of another host process
    /// (`plugboard run`) whose environment has `environment` added: a
    /// variable a test needs in a host's own environment is set for a child
    /// host only, never in this process (tests run in parallel, and every
    /// scanner started meanwhile would inherit it). The probe is disabled in
    /// that host, so its code runs only in the scanner. The host removes its
    /// private copies (and the probe's file beside them) at shutdown, so a
    /// command that lingers holds it until the file is read, then it is killed.
    static func probeInChildHost(environment: [String: String]) throws -> [String] {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory(), runtime = try TemporaryDirectory()
        try dir.copy(Fixtures.library("ScanProbe"), as: "a-probe.so")
        try dir.copy(Fixtures.library("CommandLinger"), as: "b-linger.so")
        let config = try work.write(Data(#"{ "plugins": { "fixture.scan-probe": { "enabled": false } } }"#.utf8), as: "host.json")
        // The child's images directory is made here: a folder of this user's
        // that no one else may enter, as XDG_RUNTIME_DIR must be.
        chmod(runtime.path, 0o700)
        // The command runs once discovery (the probe's scan among it) is done.
        try runUntilLingeringThenKill(
            ["run", "linger", "--plugins", dir.path, "--config", config, "--cache", work.file("cache"), "--data", work.file("data"), "--scanner-sandbox", "off"],
            environment: environment.merging(["XDG_RUNTIME_DIR": runtime.path, "TMPDIR": runtime.path]) { $1 }, work: work)
        let files = FileManager.default.enumerator(atPath: runtime.path)?.compactMap { $0 as? String } ?? []
        let seen = try #require(files.first { $0.hasSuffix("scan-probe") }, "the probe's constructor ran in the child host's scanner")
        return try String(contentsOfFile: runtime.path + "/" + seen, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// The variables a plugin's constructor sees while scanned: only those
    /// the host passes on (ScannerSettings.environment) or gives
    /// (ScannerSettings.extraEnvironment), never its secrets. Nothing here
    /// changes this process's environment.
    @Test func aScannerGetsOnlyTheEnvironmentVariablesItIsGiven() throws {
        func names(_ lines: [String]) -> Set<String> { Set(lines.filter { $0.hasPrefix("env ") }.map { String($0.dropFirst(4)) }) }
        let allowed = Set(ScannerSettings.defaultEnvironment + ["SWIFT_BACKTRACE"])

        // A secret in a host's environment: set for a child host process only.
        let secret = "PLUGBOARD_TEST_SECRET_\(getpid())"
        let scrubbed = names(try Self.probeInChildHost(environment: [secret: "hunter2"]))
        #expect(scrubbed.contains("PATH"))
        #expect(!scrubbed.contains(secret), "a host variable reached the scanner: \(scrubbed.sorted())")
        #expect(scrubbed.isSubset(of: allowed), "\(scrubbed.sorted())")

        // A variable this process has anyway (never set by a test): it reaches
        // this host's scanners only when named.
        let environment = ProcessInfo.processInfo.environment
        let usual = ["HOME", "USER", "LOGNAME", "XDG_CACHE_HOME"].filter { environment[$0] != nil }
        let others = environment.keys.sorted().filter { !allowed.contains($0) && !$0.hasPrefix("LD_") && !$0.hasPrefix("PLUGBOARD") }
        let present = try #require((usual + others).first, "the test process has no variable besides the ones scanners always get")
        let unnamed = names(try Self.probe())
        #expect(unnamed.contains("PATH"))
        #expect(!unnamed.contains(present), "a host variable reached the scanner: \(unnamed.sorted())")
        #expect(unnamed.isSubset(of: allowed), "\(unnamed.sorted())")
        let passed = names(try Self.probe(ScannerSettings(environment: ScannerSettings.defaultEnvironment + [present])))
        #expect(passed.contains(present))

        // A variable with a value, given to this host's scanners only.
        let given = "PLUGBOARD_TEST_GIVEN_\(getpid())"
        let extra = names(try Self.probe(ScannerSettings(extraEnvironment: [given: "1"])))
        #expect(extra.contains(given), "\(extra.sorted())")
        #expect(extra.subtracting([given]).isSubset(of: allowed), "\(extra.sorted())")
        #expect(ProcessInfo.processInfo.environment[given] == nil, "the host's own environment is not changed")
    }

    /// The host's open files stay in the host; no core dumps; CPU time and
    /// address space are limited.
    @Test func aScannerHasNoneOfTheHostsFilesNoCoreDumpsAndLimits() throws {
        let work = try TemporaryDirectory()
        let secretFile = try work.write(Data("token".utf8), as: "host-secret")
        let descriptor = open(secretFile, O_RDONLY)  // inheritable: no O_CLOEXEC
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let lines = try Self.probe()
        let targets = lines.filter { $0.hasPrefix("fd ") }.map { $0.split(separator: " ", maxSplits: 2).last.map(String.init) ?? "" }
        #expect(!targets.isEmpty)
        let real = URL(fileURLWithPath: secretFile).resolvingSymlinksInPath().path
        #expect(!targets.contains(secretFile) && !targets.contains(real), "the host's open file reached the scanner: \(targets)")
        #expect(lines.contains("limit core 0"))
        #expect(lines.contains { $0.hasPrefix("limit cpu ") } && !lines.contains("limit cpu unlimited"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("limit as ") } && !lines.contains("limit as unlimited"), "\(lines)")
    }

    /// Not even while it starts: a file the host holds open without
    /// close-on-exec is closed in the child before the exec, so the child
    /// cannot close it late (an inotify watcher would see a write).
    @Test func aScannerNeverHoldsTheHostsFilesWhileItStarts() throws {
        let work = try TemporaryDirectory()
        let file = try work.write(Data("source".utf8), as: "Plugin.swift")
        let descriptor = open(file, O_WRONLY)  // inheritable: no O_CLOEXEC
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let started = try StartedScanner.start(try Fixtures.executable("plugboard").path)
        defer {
            started.close()
            var status: Int32 = 0
            waitpid(started.pid, &status, 0)
        }
        // Read at once: the exec is done, the scanner's own start (where it
        // closes what it inherited too) takes milliseconds more.
        let folder = "/proc/\(started.pid)/fd"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        let targets = names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)") }
        let real = URL(fileURLWithPath: file).resolvingSymlinksInPath().path
        #expect(!targets.contains(file) && !targets.contains(real), "the starting scanner holds the host's file: \(targets)")
    }

    /// A plugin that forks while it is scanned: the fork is killed with the
    /// scanner's process group when the scan ends.
    @Test func aProcessForkedDuringAScanDoesNotOutliveIt() throws {
        let lines = try Self.probe()
        let pid = try #require(lines.first { $0.hasPrefix("forked ") }.flatMap { pid_t($0.dropFirst(7)) })
        #expect(pid > 0)
        #expect(waitForEnd(of: pid, seconds: 10), "process \(pid), forked by the plugin during its scan, is still running")
    }
}
