import DemoInterfaces
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
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Calls to one isolated plugin run side by side, up to its limit of calls
/// in flight; past it, a call waits for a slot until its deadline and is
/// shed without touching the child. Proved with barriers inside the plugin,
/// never with times.
@Suite struct ConcurrentCallTests {
    let isolation = IsolationTests()

    /// Runs `body(index)` on `count` threads released at once; their results in index order.
    func together(_ count: Int, _ body: @escaping @Sendable (Int) -> String) -> [String] {
        let results = Mutex([String](repeating: "", count: count))
        let start = DispatchSemaphore(value: 0), done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            Thread {
                start.wait()
                let result = body(index)
                results.withLock { $0[index] = result }
                done.leave()
            }.start()
        }
        for _ in 0..<count { start.signal() }
        done.wait()
        return results.withLock { $0 }
    }

    /// 64 synchronous calls are inside the plugin at once: each returns only
    /// when all 64 have arrived (one at a time, the first would wait for
    /// ever). Sandboxed too: the child's call threads pass its seccomp filter.
    @Test(arguments: [PluginIsolation.isolated, .sandboxed])
    func sixtyFourCallsAreInsideThePluginAtOnce(isolation level: PluginIsolation) throws {
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir, isolation: level, policy: IsolatedCallPolicy(deadline: .seconds(150)))
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        let results = together(64) { _ in
            (try? command.run(arguments: ["barrier", "64", "all"])) ?? "failed"
        }
        #expect(results == [String](repeating: "met 64", count: 64))
        let snapshot = try #require(host.snapshot().first { $0.id == "fixture.isolation-faults" })
        #expect(snapshot.calls == 64 && snapshot.failures == 0 && snapshot.inFlight == 0)
        #expect(snapshot.crashes == 0, "one child served them all")
    }

    /// Calls parked inside the fixture (`fault park`): each says so on one
    /// FIFO and waits for the test to close the other.
    final class Parking: Sendable {
        let announcements: Int32
        let release: Int32
        let releasePath: String
        let announcementsPath: String
        private let released = Atomic<Bool>(false)
        private let parkedLetGo = Atomic<Bool>(false)

        /// Both FIFOs in `folder` (the child's TMPDIR), held open both ways
        /// here so that neither side's open waits and no read sees an end early.
        init(in folder: String) throws {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            #expect(mkfifo(folder + "/plugboard-fixture-parked", 0o600) == 0)
            #expect(mkfifo(folder + "/release", 0o600) == 0)
            // Close-on-exec: a process another test starts must not keep an end open.
            announcements = open(folder + "/plugboard-fixture-parked", O_RDWR | O_CLOEXEC)
            release = open(folder + "/release", O_RDWR | O_CLOEXEC)
            releasePath = folder + "/release"
            announcementsPath = folder + "/plugboard-fixture-parked"
        }

        /// Waits until `count` lines have come (calls parked, say), giving
        /// up after 300 s without one so that a broken build fails, not
        /// hangs. Not less: an async call needs a thread of Swift's pool to
        /// be sent, and under make test's load synchronous tests beside can
        /// hold both for a minute (seen once at 60 s: nothing parked).
        func waitForParked(_ count: Int) -> Int {
            lines(count).count
        }

        /// The next `count` lines (fewer when none came for 300 s).
        func lines(_ count: Int) -> [String] {
            var text = ""
            while text.filter({ $0 == "\n" }).count < count {
                var poller = pollfd(fd: announcements, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 300_000) > 0 else { break }
                // One byte at a time: never past the lines asked for.
                var byte: UInt8 = 0
                guard read(announcements, &byte, 1) == 1 else { break }
                text.unicodeScalars.append(UnicodeScalar(byte))
            }
            return text.split(separator: "\n").map(String.init)
        }

        /// Lets every parked call return, and any later one at once (both
        /// FIFOs become plain files, which neither side waits on). Once;
        /// later calls do nothing.
        func releaseAll() {
            guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
            for path in [releasePath, announcementsPath] {
                unlink(path)
                close(open(path, O_WRONLY | O_CREAT, 0o600))
            }
            letParkedGo()
            close(announcements)
        }

        /// Lets the calls parked now return, the announcements still read.
        func letParkedGo() {
            guard !parkedLetGo.exchange(true, ordering: .acquiringAndReleasing) else { return }
            close(release)
        }
    }

    /// With a limit of 2, two calls parked inside the plugin hold both
    /// slots: a third waits its deadline for one and is shed
    /// (`plugin-timeout`, the child untouched); the parked two then finish.
    @Test func aCallPastTheLimitIsShedWithoutTouchingTheChild() throws {
        let dir = try TemporaryDirectory()
        let parking = try Parking(in: dir.file("tmp"))
        var limited = PluginIsolation.isolated
        limited.limits.callsInFlight = 2
        let host = try isolation.host(dir, isolation: limited, environment: ["TMPDIR": dir.file("tmp")])
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        let pid = try isolation.fault(host, "pid")
        let parked = Mutex<[String]>([])
        let finished = DispatchGroup()
        for _ in 0..<2 {
            finished.enter()
            Thread {
                let result = IsolatedCallPolicy.withDeadline(.seconds(120)) { (try? command.run(arguments: ["park", dir.file("tmp/release")])) ?? "failed" }
                parked.withLock { $0.append(result) }
                finished.leave()
            }.start()
        }
        #expect(parking.waitForParked(2) == 2)

        let shed = isolation.code { try IsolatedCallPolicy.withDeadline(.milliseconds(200)) { try command.run(arguments: ["echo", "late"]) } }
        #expect(shed == "plugin-timeout")
        let during = try #require(host.snapshot().first { $0.id == "fixture.isolation-faults" })
        #expect(during.inFlight == 2 && during.queued == 1 && during.shed == 1, "\(during)")

        parking.releaseAll()
        finished.wait()
        #expect(parked.withLock { $0 } == ["released", "released"])
        #expect(try isolation.fault(host, "pid") == pid, "the shed call did not touch the child")
        let after = try #require(host.snapshot().first { $0.id == "fixture.isolation-faults" })
        #expect(after.inFlight == 0 && after.crashes == 0)
    }

    /// A crash under many calls in flight counts once against the restart
    /// budget: every call on the dead child fails, the next one restarts it.
    @Test func aCrashUnderManyCallsCountsOnce() throws {
        let dir = try TemporaryDirectory()
        let parking = try Parking(in: dir.file("tmp"))
        defer { parking.releaseAll() }
        let host = try isolation.host(dir, budget: RestartBudget(crashes: 1), environment: ["TMPDIR": dir.file("tmp")])
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        let codes = Mutex<[String]>([])
        let finished = DispatchGroup()
        for _ in 0..<15 {
            finished.enter()
            Thread {
                let code = isolation.code { try command.run(arguments: ["park", dir.file("tmp/release")]) } ?? "answered"
                codes.withLock { $0.append(code) }
                finished.leave()
            }.start()
        }
        #expect(parking.waitForParked(15) == 15)
        #expect(isolation.code { try command.run(arguments: ["segv"]) } == "plugin-crashed")
        finished.wait()
        #expect(codes.withLock { $0 } == [String](repeating: "plugin-crashed", count: 15))
        #expect(try isolation.fault(host, "echo", "again") == "again", "restarted: one crash is within a budget of 1")
        let snapshot = try #require(host.snapshot().first { $0.id == "fixture.isolation-faults" })
        #expect(snapshot.crashes == 1 && snapshot.status == "active", "\(snapshot)")
    }

    /// A live replacement loses no call: a provider taken before the reload
    /// is answered by the new child afterwards, and callers looping through
    /// a handle across three reloads see no failure.
    @Test func aLiveReplacementLosesNoCall() throws {
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir)
        defer { host.shutdown() }
        let handle = host.registry.handle(for: Commands.self)
        let taken = try #require(handle.first)
        let old = try taken.run(arguments: ["pid"])

        let (failures, calls) = callsLooping(during: {
            for _ in 0..<3 {
                let outcome = host.reload("fixture.isolation-faults", from: dir.file("plugins/plugin.so"))
                #expect(outcome.error == nil, "\(outcome)")
            }
        }) { index in
            let reply = try handle.first?.run(arguments: ["echo", "t\(index)"])
            return reply == "t\(index)" ? nil : "got \(reply ?? "no provider")"
        }
        #expect(failures == [], "of \(calls) calls")
        let answer = try taken.run(arguments: ["pid"])
        #expect(answer != old, "the provider taken before the reloads reaches the newest child")
    }

    /// Async calls parked inside the plugin, more than Swift's pool has
    /// threads, hold none of them: a task started after them still runs,
    /// and all return once released. Called directly from the tasks
    /// instead, as many calls as threads would take the pool (two here) and
    /// the rest would never start.
    @Test func asyncCallsWaitWithoutHoldingPoolThreads() async throws {
        let dir = try TemporaryDirectory()
        let parking = try Parking(in: dir.file("tmp"))
        let host = try isolation.host(
            dir, isolation: Self.roomy, environment: ["TMPDIR": dir.file("tmp")], policy: IsolatedCallPolicy(deadline: .seconds(150)))
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        let release = dir.file("tmp/release")
        try await parkThenTick(parking, answered: "released") {
            try await IsolatedCallPolicy.withoutBlocking { try command.run(arguments: ["park", release]) }
        }
    }

    /// More calls than Swift's pool has threads (one per core): blocking
    /// ones could never all be parked at once.
    static let parkedCalls = 64 + ProcessInfo.processInfo.activeProcessorCount
    /// An isolated child that takes them all at once.
    static let roomy = PluginIsolation(isolated: true, limits: .init(callsInFlight: 1_024))

    /// Parks ``parkedCalls`` calls of `call` in the plugin at once (each
    /// says so on the parking FIFO), runs a later task on Swift's pool
    /// meanwhile, then lets them go: each must answer `answered`.
    func parkThenTick(_ parking: Parking, answered: String, _ call: @escaping @Sendable () async throws -> String) async throws {
        try await withThrowingTaskGroup(of: String.self) { group in
            let count = Self.parkedCalls
            for _ in 0..<count { group.addTask { try await call() } }
            // Waited for on a thread of its own: this task keeps no pool
            // thread blocked. Short of 64, the parked calls are let go, so
            // that blocked pool threads cannot keep this test from failing.
            let parked = await withCheckedContinuation { continuation in
                Thread {
                    let parked = parking.waitForParked(count)
                    if parked < count { parking.releaseAll() }
                    continuation.resume(returning: parked)
                }.start()
            }
            #expect(parked == count)
            #expect(await Task.detached { "tick" }.value == "tick")
            parking.releaseAll()
            var replies: [String] = []
            for try await reply in group { replies.append(reply) }
            #expect(replies == [String](repeating: answered, count: count))
        }
    }

    /// A point's `async` requirement, its proxy calling `suspendingCall`:
    /// calls parked in the child, more than Swift's pool has threads, hold
    /// none of them, so a later task runs. With the blocking `call` in the
    /// proxy, two would hold both threads (here) and the rest never start.
    @Test func anAsyncRequirementSuspendsItsCaller() async throws {
        let dir = try TemporaryDirectory()
        let parking = try Parking(in: dir.file("tmp"))
        let host = try SuspendedCallTests().host(dir)
        defer { host.shutdown() }
        let quoter = try #require(host.registry.handle(for: Quotes.self).first)
        #expect(try await quoter.quote("tea") == "quote for tea")
        let release = dir.file("tmp/release")
        try await parkThenTick(parking, answered: "quote after waiting") { try await quoter.quote("park \(release)") }
    }

    /// Cancelling the task of an async call throws `CancellationError` at
    /// once and cancels the task serving it in the child; the child lives.
    @Test func cancellingAnAsyncCallCancelsItInTheChild() async throws {
        let dir = try TemporaryDirectory()
        let parking = try Parking(in: dir.file("tmp"))
        defer { parking.releaseAll() }
        let host = try isolation.host(dir, environment: ["TMPDIR": dir.file("tmp")])
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        let pid = try isolation.fault(host, "pid")
        let release = dir.file("tmp/release")
        let call = Task { try await IsolatedCallPolicy.withoutBlocking { try command.run(arguments: ["cancellable", release]) } }
        let parked = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: parking.lines(1)) }.start()
        }
        #expect(parked == ["parked \(pid)"])
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        // The cancel is written (its child's queue drained), and a call
        // written after it on the same pipe is answered: the child read the
        // cancel first. Only then is the parked call let go.
        let child = try #require(host.lifecycle.livePlugin("fixture.isolation-faults")?.isolated?.state.withLock { $0.children[0] })
        child.cancels.sync {}
        #expect(try isolation.fault(host, "echo", "after the cancel") == "after the cancel")
        parking.letParkedGo()
        let seen = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: parking.lines(1)) }.start()
        }
        #expect(seen == ["cancelled"], "the child's task was cancelled")
        #expect(try isolation.fault(host, "pid") == pid)
        // A task cancelled before its call is sent: the call is never made.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await IsolatedCallPolicy.withoutBlocking { try command.run(arguments: ["count"]) }
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(try isolation.fault(host, "count") == "1", "the cancelled call never ran")
    }

    /// Inside `withoutBlocking`, an isolated call made after the task was
    /// cancelled is not sent: it throws `call-cancelled` (the caller itself
    /// got `CancellationError` already), and the plugin never runs it.
    @Test func aCallMadeAfterItsTaskWasCancelledIsCallCancelled() async throws {
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir)
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        _ = try isolation.fault(host, "pid")
        let started = DispatchSemaphore(value: 0), goOn = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        let code = Mutex<String?>(nil)
        let call = Task {
            try await IsolatedCallPolicy.withoutBlocking {
                // On the host's call thread: held until the task is cancelled.
                started.signal()
                goOn.wait()
                defer { finished.signal() }
                do {
                    _ = try command.run(arguments: ["count"])
                    code.withLock { $0 = "sent" }
                } catch let error as IsolatedCallError {
                    code.withLock { $0 = error.code.rawValue }
                }
            }
        }
        await withCheckedContinuation { continuation in
            Thread {
                started.wait()
                continuation.resume()
            }.start()
        }
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        goOn.signal()
        await withCheckedContinuation { continuation in
            Thread {
                finished.wait()
                continuation.resume()
            }.start()
        }
        #expect(code.withLock { $0 } == "call-cancelled")
        #expect(try isolation.fault(host, "count") == "1", "the cancelled call never ran")
    }

    /// A plugin that never crashed has no spare child; after a crash one
    /// waits, and the next restart starts in it (no spawn); a stop ends it.
    @Test func afterACrashASpareChildTakesTheNextRestart() throws {
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir)
        let first = try isolation.fault(host, "pid")
        let plugin = try #require(host.lifecycle.livePlugin("fixture.isolation-faults")?.isolated)
        #expect(plugin.spare.withLock { $0.child } == nil, "nothing spare before a crash")
        #expect(isolation.code { try isolation.fault(host, "segv") } == "plugin-crashed")
        // Made on this thread for the test (a crash makes one in the background).
        plugin.keepSpare(waiting: true)
        let spare = try #require(plugin.spare.withLock { $0.child?.pid })
        let restarted = try isolation.fault(host, "pid")
        #expect(restarted == String(spare) && restarted != first, "the restart started in the spare")
        plugin.keepSpare(waiting: true)
        let next = try #require(plugin.spare.withLock { $0.child?.pid })
        host.shutdown()
        #expect(plugin.spare.withLock { $0.child } == nil)
        #expect(kill(next, 0) == -1, "the stop ended the spare")
    }

    /// A crash and the restart after it each ask for a spare: the first
    /// claims the slot before it spawns, so the second starts none (two
    /// were spawned before, one of them killed at once).
    @Test func aCrashAndItsRestartStartOneSpare() throws {
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir)
        defer { host.shutdown() }
        _ = try isolation.fault(host, "pid")
        let plugin = try #require(host.lifecycle.livePlugin("fixture.isolation-faults")?.isolated)
        #expect(isolation.code { try isolation.fault(host, "segv") } == "plugin-crashed")
        // A spare asked for (as a crash does) claims the slot before it
        // spawns; asked for again (as the restart does), nothing new is
        // claimed: the slot holds the first claim, or the spare it made.
        plugin.discardSpare()
        plugin.keepSpare()
        let claimed = plugin.spare.withLock { slot -> UInt64? in
            switch slot {
            case let .coming(ticket): ticket
            case .ready: 0
            case .none: nil
            }
        }
        let ticket = try #require(claimed, "the slot was not claimed before the spawn")
        plugin.keepSpare()
        let after = plugin.spare.withLock { slot -> String in
            switch slot {
            case let .coming(held): held == ticket ? "the first claim" : "another claim"
            case .ready: "the spare"
            case .none: "nothing"
            }
        }
        #expect(after == "the first claim" || after == "the spare", "\(after): a second spare was started")
    }

    /// Calls that waited for a restart that failed get its error: one
    /// failure counts once against the budget, however many were waiting
    /// (each trying again would quarantine the plugin after one incident).
    @Test func aFailedRestartCountsOnceForTheCallsThatWaitedForIt() throws {
        let dir = try TemporaryDirectory()
        let marker = dir.file("crash-now")
        // A crash and one failed restart fit the budget; a failed restart per caller would not.
        let host = try isolation.host(dir, budget: RestartBudget(crashes: 2), environment: ["PLUGBOARD_FIXTURE_CRASH_INIT": marker])
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        #expect(try isolation.fault(host, "echo", "ok") == "ok")
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
        #expect(isolation.code { try command.run(arguments: ["segv"]) } == "plugin-crashed")
        // Released together: one restarts (and crashes in init), the others wait for it.
        let codes = together(8) { _ in isolation.code { try command.run(arguments: ["echo", "x"]) } ?? "answered" }
        #expect(codes == [String](repeating: "plugin-crashed", count: 8))
        #expect(host.snapshot().first { $0.id == "fixture.isolation-faults" }?.status == "active", "not quarantined")
        try FileManager.default.removeItem(atPath: marker)
        #expect(try isolation.fault(host, "echo", "back") == "back")
    }
}
