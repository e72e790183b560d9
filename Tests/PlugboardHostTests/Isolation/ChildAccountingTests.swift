import Foundation
import Plugboard
@testable import PlugboardHost
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Every child an isolated plugin has is named and shown: `ps` says whose
/// it is, the snapshot lists the spare kept since a crash, and reloads
/// leave no child of an old generation behind.
@Suite struct ChildAccountingTests {
    let isolation = IsolationTests()

    /// The arguments `ps` shows for `pid`.
    func commandLine(_ pid: Int32) -> [String] {
        guard let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return [] }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aChildIsNamedForItsPluginInPs() throws {
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir)
        defer { host.shutdown() }
        let pid = try #require(Int32(isolation.fault(host, "pid")))
        #expect(commandLine(pid) == ["plugboard-child", "fixture.isolation-faults"])
    }

    /// After a crash the snapshot shows the spare beside the running child
    /// (both in its resources); three reloads later only the newest
    /// generation's child runs: every earlier child and spare has ended.
    @Test func theSpareIsShownAndReloadsLeaveNoChildBehind() throws {
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir)
        defer { host.shutdown() }
        let first = try #require(Int32(isolation.fault(host, "pid")))
        #expect(isolation.code { try isolation.fault(host, "segv") } == "plugin-crashed")
        let plugin = try #require(host.lifecycle.livePlugin("fixture.isolation-faults")?.isolated)
        plugin.keepSpare(waiting: true)
        let spare = try #require(plugin.spare.withLock { $0.child?.pid })
        let running = try #require(Int32(isolation.fault(host, "pid")))
        // The restart took the spare; one more is kept for the next.
        plugin.keepSpare(waiting: true)
        let next = try #require(plugin.spare.withLock { $0.child?.pid })
        let status = try #require(host.snapshot().first { $0.id == "fixture.isolation-faults" }?.isolation)
        #expect(status.pid == running && status.spare == next && running == spare, "\(status)")
        var seen: Set<Int32> = [first, running, next]
        for _ in 0..<3 {
            let outcome = host.reload("fixture.isolation-faults", from: dir.file("plugins/plugin.so"))
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            seen.insert(try #require(Int32(isolation.fault(host, "pid"))))
        }
        let now = try #require(host.snapshot().first { $0.id == "fixture.isolation-faults" }?.isolation)
        #expect(now.spare == nil && (now.draining ?? []).isEmpty, "\(now)")
        // Each one this host started but the live child is gone (reaped: its pid is free).
        let alive = seen.filter { kill($0, 0) == 0 && commandLine($0).last == "fixture.isolation-faults" }
        #expect(alive == Set([now.pid].compactMap { $0 }), "\(alive) alive of \(seen)")
    }

    /// The lean child maps Foundation only for a plugin that links it: an
    /// SDK-only plugin's child never does; IsolationFaults' does (loaded by
    /// its main thread first, so `RunLoop.main` works there: IsolationTests).
    @Test func onlyAPluginThatLinksFoundationGetsItInItsChild() throws {
        func mapsFoundation(_ pid: Int32) -> Bool {
            ((try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)) ?? "").contains("/libFoundation.so")
        }
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try dir.copy(Fixtures.library("Alpha"), as: "plugins/alpha.so")
        var configuration = PluginHost.Configuration.with(pluginsDirectory: dir.file("plugins"), cacheDirectory: dir.file("cache"))
        configuration.isolation.others = .isolated
        let lean = PluginHost(configuration: configuration)
        lean.declare(Commands.self)
        try lean.start()
        defer { lean.shutdown() }
        let echo = try #require(lean.registry.handle(for: Commands.self).first)
        _ = try echo.run(arguments: ["x"])
        let pids = lean.snapshot().compactMap { $0.isolation?.pid }
        let leanPid = try #require(pids.first)
        #expect(!mapsFoundation(leanPid))
        let faults = try isolation.host(try TemporaryDirectory())
        defer { faults.shutdown() }
        let pid = try #require(Int32(isolation.fault(faults, "pid")))
        #expect(mapsFoundation(pid))
    }
}
