import Foundation
import Plugboard
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardIsolation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A call past its deadline fails alone (docs/isolation.md, "Deadlines"):
/// the calls beside it on the same child answer; a child that stops
/// answering is killed and its calls say why; timeouts never quarantine.
/// Synchronised on parked calls and events, never on times.
@Suite struct DeadlineTests {
    let isolation = IsolationTests()

    /// Calls made on threads of their own: each one's result (or its
    /// error's code), and the errors' messages.
    final class Calls: Sendable {
        let finished = DispatchGroup()
        let results = Mutex<[String]>([]), messages = Mutex<[String]>([])

        init(_ count: Int, _ command: any Command, _ arguments: [String]) {
            for _ in 0..<count {
                finished.enter()
                Thread { [self] in
                    let result = IsolatedCallPolicy.withDeadline(.seconds(120)) {
                        do { return try command.run(arguments: arguments) } catch {
                            messages.withLock { $0.append("\(error)") }
                            return (error as? IsolatedCallError)?.code.rawValue ?? "\(error)"
                        }
                    }
                    results.withLock { $0.append(result) }
                    finished.leave()
                }.start()
            }
        }
    }

    /// A hung call past its 1 s deadline while 15 others are parked on the
    /// same child: it alone fails; the 15 answer, nothing counts as a
    /// crash, and the child, its hung call still running, is drained (new
    /// calls go to a new one) and ends once the 15 are done.
    @Test func aCallPastItsDeadlineFailsAloneBesideFifteenOthers() throws {
        let dir = try TemporaryDirectory()
        let parking = try ConcurrentCallTests.Parking(in: dir.file("tmp"))
        defer { parking.releaseAll() }
        let drained = DispatchSemaphore(value: 0)
        let host = try isolation.host(dir, environment: ["TMPDIR": dir.file("tmp")], events: { event in
            if event.kind == .timedOut && event.detail.contains("is drained") { drained.signal() }
        })
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        let before = try isolation.fault(host, "pid")
        let parked = Calls(15, command, ["park", dir.file("tmp/release")])
        #expect(parking.waitForParked(15) == 15)
        let late = isolation.code { try IsolatedCallPolicy.withDeadline(.seconds(1)) { try command.run(arguments: ["hang"]) } }
        #expect(late == "plugin-timeout")
        // The hung call ignores its cancel: the child is drained, not killed,
        // and shown as such while the 15 hold it.
        #expect(drained.wait(timeout: .now() + 120) == .success)
        let draining = host.snapshot().first { $0.id == "fixture.isolation-faults" }?.isolation
        #expect(draining?.draining == Int32(before).map { [$0] } && draining?.pid == nil, "\(String(describing: draining))")
        parking.letParkedGo()
        parked.finished.wait()
        #expect(parked.results.withLock { $0 } == [String](repeating: "released", count: 15))
        let record = try #require(host.snapshot().first { $0.id == "fixture.isolation-faults" })
        #expect(record.crashes == 0 && record.isolation?.timeouts == 1, "\(String(describing: record.isolation))")
        #expect(try isolation.fault(host, "pid") != before, "new calls go to a new child")
        #expect(!host.diagnostics.contains { $0.code == "isolated-crashed" })
    }

    /// A child that stops answering (stopped with SIGSTOP) when a call runs
    /// past its deadline is killed; the calls it held fail naming why.
    @Test func anUnresponsiveChildIsKilledAndItsCallsSayWhy() throws {
        let dir = try TemporaryDirectory()
        let parking = try ConcurrentCallTests.Parking(in: dir.file("tmp"))
        defer { parking.releaseAll() }
        let host = try isolation.host(dir, environment: ["TMPDIR": dir.file("tmp")])
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        let pid = try #require(Int32(try isolation.fault(host, "pid")))
        let parked = Calls(3, command, ["park", dir.file("tmp/release")])
        #expect(parking.waitForParked(3) == 3)
        #expect(kill(pid, SIGSTOP) == 0)
        let late = isolation.code { try IsolatedCallPolicy.withDeadline(.seconds(1)) { try command.run(arguments: ["echo", "late"]) } }
        #expect(late == "plugin-timeout")
        parked.finished.wait()
        #expect(parked.results.withLock { $0 } == [String](repeating: "plugin-killed-unresponsive", count: 3))
        #expect(parked.messages.withLock { $0 }.allSatisfy { $0.contains("liveness ping") && $0.contains("the call of run ran past its deadline of 1.0 seconds") },
                "\(parked.messages.withLock { $0 })")
        #expect(try isolation.fault(host, "echo", "again") == "again", "the next call restarts it")
    }

    /// A plugin that only times out is never quarantined: with a budget of
    /// one crash, three calls past their deadline (each one draining its
    /// child) leave it answering.
    @Test func aPluginThatOnlyTimesOutIsNeverQuarantined() throws {
        let dir = try TemporaryDirectory()
        let drained = DispatchSemaphore(value: 0)
        let host = try isolation.host(dir, budget: RestartBudget(crashes: 1), events: { event in
            if event.kind == .timedOut && event.detail.contains("is drained") { drained.signal() }
        })
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        for _ in 0..<3 {
            #expect(isolation.code { try IsolatedCallPolicy.withDeadline(.milliseconds(500)) { try command.run(arguments: ["hang"]) } } == "plugin-timeout")
            #expect(drained.wait(timeout: .now() + 120) == .success)
        }
        #expect(try isolation.fault(host, "echo", "still") == "still")
        let record = try #require(host.snapshot().first { $0.id == "fixture.isolation-faults" })
        #expect(record.isolation?.state == "running" && record.isolation?.timeouts == 3 && record.crashes == 0, "\(String(describing: record.isolation))")
        // Each drained child ended at once: no call of the host's waited on it.
        #expect(record.isolation?.draining == [], "\(String(describing: record.isolation))")
    }
}
