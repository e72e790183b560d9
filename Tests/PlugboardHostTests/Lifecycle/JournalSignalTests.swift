import Foundation
import PlugboardHost
import Testing

/// The crash journal has no hidden global effects: each host keeps its own
/// (two hosts in one process both protect their next start), and only a
/// host that asks for them (`handlesInterruptSignals`) installs the
/// SIGINT/SIGTERM handlers.
@Suite struct JournalSignalTests {
    func host(_ dir: TemporaryDirectory, _ cache: TemporaryDirectory) throws -> ProcessResult {
        try runProcess(Fixtures.executable("plugboard-test-host"), [dir.path, cache.path])
    }

    func line(_ output: String, _ file: String) -> String? {
        output.split(separator: "\n").first { $0.hasSuffix(" \(file)") }.map(String.init)
    }

    /// Reads `reader` (a FIFO) until `count` lines have come through it, or a
    /// generous deadline passes: waits for the events, not for a time.
    func linesArrive(_ count: Int, at reader: Int32) -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        var lines = 0
        var buffer = [UInt8](repeating: 0, count: 256)
        while lines < count {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
            var descriptor = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Int32(clamping: milliseconds)) > 0 else { continue }
            let got = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            if got > 0 { lines += buffer[..<got].filter { $0 == 0x0A }.count }
        }
        return true
    }

    struct Ending: Sendable, CustomStringConvertible {
        let signal: Int32
        /// The start of the next start's line for the hung plugin: status and code.
        let quarantine: String
        /// What the next start's diagnostic says.
        let says: String
        var description: String { signal == SIGKILL ? "SIGKILL" : "SIGTERM" }
    }

    static let endings = [
        // Nothing runs in the process: each note stays as its own host wrote it.
        Ending(signal: SIGKILL, quarantine: "quarantined host-crashed", says: "during this plugin's activate"),
        // Past the threshold (0 here): the one handler marks every host's note.
        Ending(signal: SIGTERM, quarantine: "quarantined host-hung", says: "stopped by SIGTERM after this plugin's activate had run for"),
    ]

    /// One process, two hosts (`--second`), each with its own plugins and
    /// cache directories, each stuck in a plugin's activate at the same
    /// time. Ended by `ending`, the next start of each host quarantines its
    /// own plugin, and only that one.
    @Test(arguments: endings)
    func twoHostsInOneProcessEachKeepAWorkingJournal(_ ending: Ending) throws {
        let first = try TemporaryDirectory(), firstCache = try TemporaryDirectory()
        let second = try TemporaryDirectory(), secondCache = try TemporaryDirectory()
        let signals = try TemporaryDirectory()
        try first.copy(Fixtures.library("Alpha"), as: "a.so")
        try first.copy(Fixtures.library("ActivateHang"), as: "hang.so")
        try second.copy(Fixtures.library("Alpha"), as: "a.so")
        try second.copy(Fixtures.library("ActivateHang"), as: "stuck.so")

        let fifo = signals.file("activating.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        // A writer of the test's own: between the two plugins' lines the FIFO
        // keeps a writer, so poll waits for the second instead of reporting an end.
        let keeper = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(reader >= 0 && keeper >= 0)
        defer {
            close(reader)
            close(keeper)
        }
        let process = try ShellProcess(
            Fixtures.executable("plugboard-test-host"),
            [first.path, firstCache.path, "--hang-threshold-ms", "0", "--activate-all", "--second", second.path, secondCache.path],
            environment: ["PLUGBOARD_FIXTURE_FIFO": fifo])
        let reached = linesArrive(2, at: reader)
        #expect(reached, "both hosts' plugins reach activate")
        kill(process.pid, reached ? ending.signal : SIGKILL)
        #expect(process.waitForSignal() == ending.signal)

        for (dir, cache, file) in [(first, firstCache, "hang.so"), (second, secondCache, "stuck.so")] {
            // Without --activate-all: a plugin wrongly left available is reported, not run (it would hang).
            let next = try host(dir, cache)
            #expect(next.status == 0, "\(next.stderr)")
            #expect(line(next.stdout, file) == "\(ending.quarantine) fixture.activate-hang \(file)", "\(next.stdout)")
            #expect(next.stderr.contains(ending.says), "\(next.stderr)")
            #expect(line(next.stdout, "a.so") == "available - fixture.alpha a.so")
        }
    }

    /// A library does not take over a process's signals: a host with the
    /// default configuration runs journaled init and activate (its note file
    /// is open) and leaves SIGINT and SIGTERM as they were.
    @Test func aHostThatDoesNotAskForSignalHandlersInstallsNone() throws {
        func isDefault(_ number: Int32) -> Bool {
            var action = sigaction()
            return sigaction(number, nil, &action) == 0 && action.__sigaction_handler.sa_handler == nil
        }
        try #require(isDefault(SIGTERM) && isDefault(SIGINT), "this test process set SIGINT/SIGTERM already: nothing to compare")
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        defer {
            host.shutdown()
            withExtendedLifetime((dir, cache)) {}
        }
        #expect(!host.configuration.crashJournal.handlesInterruptSignals)
        try host.start()
        host.activateAll()
        #expect(host.activePluginIDs == ["fixture.alpha"])
        // The journal did run: its note file is open (the moment the old code installed handlers).
        let notes = (try? FileManager.default.contentsOfDirectory(atPath: cache.file("journal"))) ?? []
        #expect(notes.contains { $0.hasSuffix(".note") }, "\(notes)")
        #expect(isDefault(SIGTERM), "SIGTERM's action changed")
        #expect(isDefault(SIGINT), "SIGINT's action changed")
    }
}
