import Foundation
import Plugboard
@testable import PlugboardHost
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
        let pongs = try EventPipe()
        let received = Mutex<[String]>([])
        let subscription = host.events.subscribe(to: "fixture.pong") { payload in
            let text = String(decoding: try payload.json(), as: UTF8.self)
            received.withLock { $0.append(text) }
            pongs.signal()
        }
        defer { subscription.cancel() }
        _ = try isolation.fault(host, "pid")  // activates it
        for index in 0..<20 {
            host.events.publish(EventPayload(name: "fixture.ping", json: Array(#"{"text":"ping \#(index)"}"#.utf8)))
        }
        for _ in 0..<20 { pongs.wait() }
        let pids = Set(received.withLock { $0 }.compactMap { $0.split(separator: "\"pid\":").last?.prefix { $0.isNumber } })
        #expect(pids.count == 1, "answered by \(pids)")
        #expect(received.withLock { $0.count } == 20)
    }

    /// A crash takes one child: the next call is answered by another (or
    /// its replacement) and the crashed one restarts in the background;
    /// the budget counts the crashes of every child.
    @Test func aCrashTakesOneChildAndTheBudgetIsThePlugins() throws {
        let dir = try TemporaryDirectory()
        let restarted = try EventPipe()
        let host = try isolation.host(dir, isolation: Self.pool, budget: RestartBudget(crashes: 1), events: { event in
            if event.kind == .restarted { restarted.signal() }
        })
        defer { host.shutdown() }
        let crashed = try isolation.fault(host, "pid")
        let pool = Set(try #require(host.snapshot().first { $0.id == "fixture.isolation-faults" }?.isolation?.pool))
        #expect(pool.count == 2 && pool.contains(Int32(crashed) ?? 0))
        #expect(isolation.code { try isolation.fault(host, "segv") } == "plugin-crashed")
        let next = try isolation.fault(host, "pid")
        #expect(next != crashed)
        restarted.wait()
        let after = try #require(host.snapshot().first { $0.id == "fixture.isolation-faults" })
        #expect(after.isolation?.pool?.count == 2 && after.crashes == 1 && after.isolation?.restarts == 1)
        // A second crash, in whichever child: over the plugin's budget of one.
        #expect(isolation.code { try isolation.fault(host, "segv") } == "plugin-crashed")
        #expect(host.records.first { $0.id == "fixture.isolation-faults" }?.code == "isolated-crash-loop")
    }
}
