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
        if testCase.fixture == "InitExit" {
            // exit() raises no signal: nothing tells how the process ended.
            #expect(next.stderr.contains("exit status unknown"), "\(next.stderr)")
        } else {
            // A fatal error traps: the fault handler saw the signal.
            #expect(next.stderr.contains("the host process crashed with SIG"), "\(next.stderr)")
        }

        // And it stays so: a third start does not run it either.
        let third = try host(dir, cache, ["--activate-all"])
        #expect(third.status == 0)
        #expect(line(third.stdout, "bad.so")?.hasPrefix("quarantined host-crashed") == true)
    }

    /// Starts the host with `fixture` (as hang.so), waits until the plugin
    /// says it is stuck (a line through a FIFO), then sends `signal`.
    func interruptHangingActivate(
        _ signal: Int32, threshold: String, fixture: String = "ActivateHang", arguments: [String] = ["--activate-all"],
        again folders: (TemporaryDirectory, TemporaryDirectory)? = nil
    ) throws -> (TemporaryDirectory, TemporaryDirectory) {
        let dir = try folders?.0 ?? TemporaryDirectory(), cache = try folders?.1 ?? TemporaryDirectory()
        if folders == nil {
            try dir.copy(Fixtures.library("Alpha"), as: "a.so")
            try dir.copy(Fixtures.library(fixture), as: "hang.so")
        }
        let fifo = cache.file("activating.fifo")
        unlink(fifo)
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

    /// Stopped once during a plugin's activate, before the hang threshold:
    /// a person stopping a slow start, so the next start only warns. Stopped
    /// there again in that next start: a hang that repeats, quarantined.
    @Test func aSecondStartStoppedInTheSameActivateQuarantinesIt() throws {
        let first = try interruptHangingActivate(SIGINT, threshold: "600000")
        let second = try interruptHangingActivate(SIGINT, threshold: "600000", again: first)
        // The second start read the first one's note (a warning, no quarantine)
        // before it activated the plugin again and was stopped there again.
        let third = try host(second.0, second.1)
        #expect(line(third.stdout, "hang.so") == "quarantined host-hung fixture.activate-hang hang.so", "\(third.stdout)")
        #expect(third.stderr.contains("during this plugin's activate in 2 starts in a row"), "\(third.stderr)")
        #expect(line(third.stdout, "a.so") == "available - fixture.alpha a.so")
    }

    @Test func aPromptCtrlCOnceQuarantinesNothingAndWarns() throws {
        let (dir, cache) = try interruptHangingActivate(SIGINT, threshold: "600000")
        let next = try host(dir, cache)
        #expect(line(next.stdout, "hang.so") == "available - fixture.activate-hang hang.so")
        #expect(next.stderr.contains("[host-interrupted]") || next.stderr.contains("host-interrupted"), "\(next.stderr)")
        #expect(next.stderr.contains("if the next start is stopped there too"), "\(next.stderr)")
    }
}
