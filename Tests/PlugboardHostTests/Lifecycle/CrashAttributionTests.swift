import Foundation
import Testing

/// Plugin code that crashes the host at run time is blamed by the frame that
/// faulted, not by whichever plugin's call happened to be running; and no
/// plugin can redirect the journal's notes. Each scenario runs 20 fresh
/// `plugboard run` processes, killed for real.
@Suite struct CrashAttributionTests {
    static let runs = 20

    struct Status: Decodable {
        struct Plugin: Decodable {
            struct Quarantine: Decodable {
                let ending: String
                let phase: String
                let evidence: String?
                let signal: String?
            }
            let id: String
            let status: String
            let quarantine: Quarantine?
        }
        let plugins: [Plugin]
    }

    /// `plugboard run COMMAND` on `dir` with the cache `cache`: a start that
    /// a plugin crashes.
    func crashingRun(_ command: String, _ dir: TemporaryDirectory, cache: String, data: String, environment: [String: String]) throws -> ProcessResult {
        try runProcess(
            Fixtures.executable("plugboard"), ["run", command, "--plugins", dir.path, "--cache", cache, "--data", data],
            environment: environment)
    }

    /// `plugboard list --json` for `dir` with the cache `cache`: the start
    /// after a crash, which reads the dead host's journal.
    func nextStart(_ dir: TemporaryDirectory, cache: String) throws -> [String: Status.Plugin] {
        let listed = try runProcess(Fixtures.executable("plugboard"), ["list", "--json", "--plugins", dir.path, "--cache", cache])
        let status = try JSONDecoder().decode(Status.self, from: Data(listed.stdout.utf8))
        return Dictionary(uniqueKeysWithValues: status.plugins.map { ($0.id, $0) })
    }

    /// The scenario: plugin A's own thread segfaults while plugin B's
    /// command runs (A's thread faults once B's command has started: a FIFO
    /// between them, an event). A thread is not a journaled call, so only
    /// the faulting frame can name A. Before this was built: A 0/20, B 12/20.
    @Test func aThreadThatFaultsIsBlamedOnItsPluginNotOnTheRunningCommand() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        try dir.copy(Fixtures.library("ThreadFault"), as: "a.so")
        try dir.copy(Fixtures.library("SlowCommand"), as: "b.so")
        var blamedA = 0, blamedB = 0
        for run in 0..<Self.runs {
            let cache = work.file("cache-\(run)"), started = work.file("started-\(run)")
            #expect(mkfifo(started, 0o600) == 0)
            // Half the runs with the Swift runtime's backtracer chained after
            // the attribution handler, half without it.
            let crashed = try crashingRun(
                "slow", dir, cache: cache, data: work.file("data"),
                environment: ["PLUGBOARD_FIXTURE_FAULT_AFTER": started, "SWIFT_BACKTRACE": run % 2 == 0 ? "enable=no" : "enable=yes,interactive=no"])
            #expect(crashed.status == SIGSEGV, "run \(run): \(crashed.stderr.suffix(500))")
            let plugins = try nextStart(dir, cache: cache)
            let a = try #require(plugins["fixture.thread-fault"]), b = try #require(plugins["fixture.slow-command"])
            if a.status == "quarantined" { blamedA += 1 }
            if b.status == "quarantined" { blamedB += 1 }
            #expect(a.quarantine?.evidence == "frame", "run \(run)")
            #expect(a.quarantine?.phase == "thread", "run \(run)")
            #expect(a.quarantine?.signal == "SIGSEGV", "run \(run)")
        }
        #expect(blamedA == Self.runs)
        #expect(blamedB == 0)
    }

    /// A fatal error inside a plugin's command (the trap is in the Swift
    /// runtime; the plugin's frame is further up the stack) is found by
    /// walking the frames, and its phase is the call that was running.
    @Test func aFatalErrorInACommandIsFoundByWalkingPastTheRuntimeFrame() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library("CommandFatal"), as: "bad.so")
        let cache = work.file("cache")
        let crashed = try crashingRun("boom", dir, cache: cache, data: work.file("data"), environment: ["SWIFT_BACKTRACE": "enable=no"])
        #expect(crashed.status != 0)
        let plugins = try nextStart(dir, cache: cache)
        let bad = try #require(plugins["fixture.command-fatal"]?.quarantine)
        #expect(bad.evidence == "frame")
        #expect(bad.phase == "call")
        #expect(plugins["fixture.alpha"]?.status == "available")
    }

    /// A plugin that closes descriptors 3–255 in `activate()` and reopens
    /// each number on a file of its own gets no note, and is not blamed for
    /// what the journal noted before it took them; the plugin that then kills
    /// the host (SIGKILL: no handler sees it, only the journal's note of its
    /// running call can name it) is. Before: the thief's file got the next
    /// note, the thief was quarantined and the real crasher was not.
    @Test func aPluginThatTakesTheJournalsDescriptorGetsNoNoteAndIsNotBlamed() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        try dir.copy(Fixtures.library("CommandFatal"), as: "crasher.so")
        try dir.copy(Fixtures.library("DescriptorThief"), as: "thief.so")
        var blamedCrasher = 0, blamedThief = 0
        for run in 0..<Self.runs {
            let cache = work.file("cache-\(run)"), stolen = work.file("stolen-\(run)")
            let crashed = try crashingRun(
                "vanish", dir, cache: cache, data: work.file("data"),
                environment: ["PLUGBOARD_FIXTURE_THIEF_FILE": stolen, "SWIFT_BACKTRACE": "enable=no"])
            #expect(crashed.status == SIGKILL, "run \(run): \(crashed.stderr.suffix(500))")
            let received = (try? Data(contentsOf: URL(fileURLWithPath: stolen))) ?? Data()
            #expect(received.isEmpty, "run \(run): the thief's file got \(String(decoding: received, as: UTF8.self))")
            let plugins = try nextStart(dir, cache: cache)
            if plugins["fixture.command-fatal"]?.status == "quarantined" { blamedCrasher += 1 }
            if plugins["fixture.descriptor-thief"]?.status == "quarantined" { blamedThief += 1 }
            #expect(plugins["fixture.command-fatal"]?.quarantine?.evidence == "call", "run \(run)")
            #expect(plugins["fixture.command-fatal"]?.quarantine?.phase == "call", "run \(run)")
        }
        #expect(blamedCrasher == Self.runs)
        #expect(blamedThief == 0)
    }

    /// Two hosts in one process, each running a command, when a plugin
    /// thread of the first faults: the first blames that plugin, and the
    /// second blames none of its own (its fault file says "elsewhere").
    @Test func aFaultInOneHostsPluginBlamesNothingInAnotherHost() throws {
        let first = try TemporaryDirectory(), firstCache = try TemporaryDirectory()
        let second = try TemporaryDirectory(), secondCache = try TemporaryDirectory(), work = try TemporaryDirectory()
        try first.copy(Fixtures.library("ThreadFault"), as: "a.so")
        try first.copy(Fixtures.library("SlowCommand"), as: "b.so")
        try second.copy(Fixtures.library("SlowCommand"), as: "b.so")
        let host = try Fixtures.executable("plugboard-test-host")
        #expect(mkfifo(work.file("started"), 0o600) == 0)
        let crashed = try runProcess(
            host, [first.path, firstCache.path, "--activate-all", "--run", "slow", "--second", second.path, secondCache.path],
            environment: ["PLUGBOARD_FIXTURE_FAULT_AFTER": work.file("started"), "SWIFT_BACKTRACE": "enable=no"])
        #expect(crashed.status == SIGSEGV, "\(crashed.stderr.suffix(500))")
        func line(_ output: String, _ file: String) -> String? {
            output.split(separator: "\n").first { $0.hasSuffix(" \(file)") }.map(String.init)
        }
        let firstNext = try runProcess(host, [first.path, firstCache.path])
        #expect(line(firstNext.stdout, "a.so") == "quarantined host-crashed fixture.thread-fault a.so", "\(firstNext.stdout)")
        #expect(line(firstNext.stdout, "b.so") == "available - fixture.slow-command b.so", "\(firstNext.stdout)")
        let secondNext = try runProcess(host, [second.path, secondCache.path])
        #expect(line(secondNext.stdout, "b.so") == "available - fixture.slow-command b.so", "\(secondNext.stdout)")
    }
}
