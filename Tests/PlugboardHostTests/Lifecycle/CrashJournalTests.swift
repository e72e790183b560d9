import Foundation
import Testing

/// Plugin code that kills the host in init, activate or a command costs one
/// crashed start, never a crash loop: the next start quarantines it. Run with
/// a real host process (`plugboard-test-host`), killed for real.
@Suite struct CrashJournalTests {
    func host(_ dir: TemporaryDirectory, _ cache: TemporaryDirectory, _ extra: [String] = [], environment: [String: String]? = nil) throws -> ProcessResult {
        try runProcess(Fixtures.executable("plugboard-test-host"), [dir.path, cache.path] + extra, environment: environment)
    }

    func line(_ output: String, _ file: String) -> String? {
        output.split(separator: "\n").first { $0.hasSuffix(" \(file)") }.map(String.init)
    }

    struct Case: Sendable, CustomStringConvertible {
        let fixture: String
        let arguments: [String]
        let phase: String
        var description: String { fixture }
    }

    static let cases: [Case] = [
        Case(fixture: "InitExit", arguments: ["--activate-all"], phase: "init"),
        Case(fixture: "InitFatal", arguments: ["--activate-all"], phase: "init"),
        Case(fixture: "CommandFatal", arguments: ["--run", "boom"], phase: "call"),
    ]

    @Test(arguments: cases)
    func aPluginThatKillsTheHostCostsOneStartThenIsQuarantined(_ testCase: Case) throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library(testCase.fixture), as: "bad.so")

        let crashed = try host(dir, cache, testCase.arguments)
        #expect(crashed.status != 0, "the first start dies: \(crashed.stdout)")
        if testCase.fixture == "InitExit" { #expect(crashed.status == 3) }

        let next = try host(dir, cache, ["--activate-all", "--run", "alpha"])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(line(next.stdout, "a.so") == "active - fixture.alpha a.so")
        let bad = try #require(line(next.stdout, "bad.so"))
        #expect(bad.hasPrefix("quarantined host-crashed fixture."), "\(bad)")
        #expect(next.stdout.hasSuffix("alpha\n"))
        #expect(next.stderr.contains("during this plugin's \(testCase.phase)"), "\(next.stderr)")
        #expect(next.stderr.contains("exit status unknown"))

        // And it stays so: a third start does not run it either.
        let third = try host(dir, cache, ["--activate-all"])
        #expect(third.status == 0)
        #expect(line(third.stdout, "bad.so")?.hasPrefix("quarantined host-crashed") == true)
    }

    /// Starts the host with `fixture` (as hang.so), waits until the plugin
    /// says it is stuck (a line through a FIFO), then sends `signal`.
    func interruptHangingActivate(
        _ signal: Int32, threshold: String, fixture: String = "ActivateHang", arguments: [String] = ["--activate-all"]
    ) throws -> (TemporaryDirectory, TemporaryDirectory) {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library(fixture), as: "hang.so")
        let fifo = cache.file("activating.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        defer { close(reader) }
        let process = try ShellProcess(
            Fixtures.executable("plugboard-test-host"), [dir.path, cache.path, "--hang-threshold-ms", threshold] + arguments,
            environment: ["PLUGBOARD_FIXTURE_FIFO": fifo])
        // The event, not a delay: wait (with a generous deadline) for the line.
        var descriptor = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
        let reached = poll(&descriptor, 1, 60_000) == 1
        #expect(reached, "the plugin never reached activate")
        kill(process.pid, reached ? signal : SIGKILL)
        #expect(process.waitForSignal() == signal)
        return (dir, cache)
    }

    @Test func aHostStoppedWhileActivateHangsQuarantinesItNextStart() throws {
        let (dir, cache) = try interruptHangingActivate(SIGTERM, threshold: "0")
        let next = try host(dir, cache, ["--activate-all"])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(line(next.stdout, "hang.so") == "quarantined host-hung fixture.activate-hang hang.so")
        #expect(next.stderr.contains("stopped by SIGTERM after this plugin's activate had run for"), "\(next.stderr)")
        #expect(line(next.stdout, "a.so") == "active - fixture.alpha a.so")
    }

    /// A command may run long on purpose: stopping it is not the plugin's fault.
    @Test func stoppingALongCommandQuarantinesNothing() throws {
        let (dir, cache) = try interruptHangingActivate(SIGINT, threshold: "0", fixture: "CommandLinger", arguments: ["--run", "linger"])
        let next = try host(dir, cache)
        #expect(line(next.stdout, "hang.so") == "available - fixture.command-linger hang.so")
        #expect(!next.stderr.contains("quarantined"), "\(next.stderr)")
    }

    @Test func aPromptCtrlCQuarantinesNothing() throws {
        let (dir, cache) = try interruptHangingActivate(SIGINT, threshold: "600000")
        let next = try host(dir, cache)
        #expect(line(next.stdout, "hang.so") == "available - fixture.activate-hang hang.so")
        #expect(!next.stderr.contains("quarantined"))
    }
}
