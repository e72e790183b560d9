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

/// A plugin in a pool of children (`PluginIsolation.children`): calls go to
/// the least loaded, events to one child, the restart budget is the
/// plugin's, and a crashed child restarts while the others serve.
@Suite struct PoolTests {
    let isolation = IsolationTests()
    static let pool = PluginIsolation(isolated: true, children: 2)

    /// Two calls parked at once are in two children, and the snapshot
    /// shows both children; a later call is served meanwhile.
    @Test func callsGoToTheLeastLoadedChild() throws {
        let dir = try TemporaryDirectory()
        let parking = try ConcurrentCallTests.Parking(in: dir.file("tmp"))
        defer { parking.releaseAll() }
        let host = try isolation.host(dir, isolation: Self.pool, environment: ["TMPDIR": dir.file("tmp")])
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        let finished = DispatchGroup()
        for _ in 0..<2 {
            finished.enter()
            Thread {
                _ = IsolatedCallPolicy.withDeadline(.seconds(120)) { try? command.run(arguments: ["park", dir.file("tmp/release")]) }
                finished.leave()
            }.start()
        }
        let parked = Set(parking.lines(2).map { $0.replacingOccurrences(of: "parked ", with: "") })
        #expect(parked.count == 2, "each child holds one: \(parked)")
        let status = try #require(host.snapshot().first { $0.id == "fixture.isolation-faults" }?.isolation)
        #expect(Set((status.pool ?? []).map(String.init)) == parked)
        #expect(try isolation.fault(host, "echo", "still") == "still")
        parking.releaseAll()
        finished.wait()
    }

    /// Each event goes to one child: every answer comes from one pid.
    @Test func eachEventGoesToOneChild() throws {
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir, isolation: Self.pool)
        defer { host.shutdown() }
        let pongs = try Pongs(host)
        defer { pongs.subscription.cancel() }
        _ = try isolation.fault(host, "pid")  // activates it
        for index in 0..<20 {
            host.events.publish(EventPayload(name: "fixture.ping", json: Array(#"{"text":"ping \#(index)"}"#.utf8)))
        }
        for _ in 0..<20 { pongs.arrived.wait() }
        let pids = Set(pongs.texts.compactMap { $0.split(separator: "\"pid\":").last?.prefix { $0.isNumber } })
        #expect(pids.count == 1, "answered by \(pids)")
        #expect(pongs.texts.count == 20)
    }

    /// A crash takes one child: calls go to the others while it restarts
    /// in the background, with no call for it. The budget is the plugin's:
    /// one crash in each of two children is over a budget of one, and the
    /// quarantine ends the child that did not crash too.
    @Test func aCrashTakesOneChildAndTheBudgetIsThePlugins() throws {
        let dir = try TemporaryDirectory()
        let parking = try ConcurrentCallTests.Parking(in: dir.file("tmp"))
        defer { parking.releaseAll() }
        #expect(mkfifo(dir.file("tmp/release-2"), 0o600) == 0)
        let secondRelease = open(dir.file("tmp/release-2"), O_RDWR | O_CLOEXEC)
        defer { close(secondRelease) }
        let restarted = try EventPipe()
        let host = try isolation.host(dir, isolation: Self.pool, budget: RestartBudget(crashes: 1),
                                      environment: ["TMPDIR": dir.file("tmp")], events: { event in
            if event.kind == .restarted { restarted.signal() }
        })
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        _ = try isolation.fault(host, "pid")
        func park(_ release: String, _ returned: DispatchGroup) {
            returned.enter()
            Thread {
                _ = IsolatedCallPolicy.withDeadline(.seconds(120)) { try? command.run(arguments: ["park", release]) }
                returned.leave()
            }.start()
        }
        let first = DispatchGroup(), second = DispatchGroup()
        // A call parked in one child (x): the crash goes to the other.
        park(dir.file("tmp/release"), first)
        let x = try #require(parking.lines(1).first?.replacingOccurrences(of: "parked ", with: ""))
        #expect(isolation.code { try isolation.fault(host, "segv") } == "plugin-crashed")
        #expect(try isolation.fault(host, "pid") == x, "the child that did not crash serves")
        restarted.wait()
        // A call parked in the new child (z), x let go: the next crash is x's.
        park(dir.file("tmp/release-2"), second)
        let z = try #require(parking.lines(1).first?.replacingOccurrences(of: "parked ", with: ""))
        #expect(z != x)
        parking.letParkedGo()
        first.wait()
        #expect(isolation.code { try isolation.fault(host, "segv") } == "plugin-crashed")
        #expect(host.records.first { $0.id == "fixture.isolation-faults" }?.code == "isolated-crash-loop")
        // Quarantined: the child that did not crash is gone too (killed and reaped).
        #expect(kill(pid_t(z) ?? 0, 0) == -1 && errno == ESRCH)
        second.wait()
    }

    /// After a call ran past its deadline on one child, calls go to the
    /// other while the first is watched (pinged; drained if the call still
    /// runs): a healthy child first, though both are idle.
    @Test func afterADeadlineCallsGoToTheHealthyChild() throws {
        let dir = try TemporaryDirectory()
        let timedOut = DispatchSemaphore(value: 0)
        let host = try isolation.host(dir, isolation: Self.pool, events: { event in
            if event.kind == .timedOut && event.detail.contains("ran past its deadline") { timedOut.signal() }
        })
        defer { host.shutdown() }
        let command = try #require(host.registry.handle(for: Commands.self).first)
        // Idle, calls go to the first child: the hung one does too.
        let first = try isolation.fault(host, "pid")
        #expect(isolation.code { try IsolatedCallPolicy.withDeadline(.milliseconds(300)) { try command.run(arguments: ["hang"]) } } == "plugin-timeout")
        #expect(timedOut.wait(timeout: .now() + 120) == .success)
        let served = try (0..<10).map { _ in try isolation.fault(host, "pid") }
        #expect(!served.contains(first), "\(served) beside \(first)")
    }
}
