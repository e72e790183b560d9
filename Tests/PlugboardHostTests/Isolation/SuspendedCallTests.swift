import DemoInterfaces
import Foundation
import Plugboard
@testable import PlugboardHost
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Synchronization
import Testing

/// An `async` requirement's call is sent from its caller's task, which
/// suspends until whoever reads the child's replies resumes it (no thread
/// is handed the call): beside blocking callers on the same child, past its
/// deadline, and cancelled (docs/isolation.md, "From async code").
@Suite struct SuspendedCallTests {
    let concurrent = ConcurrentCallTests()

    /// A host running the fixture AsyncQuoter isolated (its `async` quote and a blocking `echo` command).
    func host(_ dir: TemporaryDirectory) throws -> PluginHost {
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try dir.copy(Fixtures.library("AsyncQuoter"), as: "plugins/quoter.so")
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: dir.file("plugins"), cacheDirectory: dir.file("cache"),
            scanner: ScannerSettings(extraEnvironment: ["TMPDIR": dir.file("tmp")]))
        configuration.isolation.others = ConcurrentCallTests.roomy
        let host = PluginHost(configuration: configuration)
        // Far past any test's: a test of deadlines sets its own.
        host.declare(Quotes.self, isolatedCalls: IsolatedCallPolicy(deadline: .seconds(300)))
        host.declare(Commands.self, isolatedCalls: IsolatedCallPolicy(deadline: .seconds(300)))
        try host.start()
        return host
    }

    func plugin(_ host: PluginHost) throws -> IsolatedPlugin {
        try #require(host.lifecycle.livePlugin("fixture.async-quoter")?.isolated)
    }

    /// 16 tasks calling the async quote and 16 threads calling the blocking
    /// echo of one child, released together: every answer is its own, and
    /// every async call was sent from its task (none took a call thread).
    @Test func asyncAndBlockingCallersShareOneChild() async throws {
        let dir = try TemporaryDirectory()
        let host = try host(dir)
        defer { host.shutdown() }
        let quoter = try #require(host.registry.handle(for: Quotes.self).first)
        let echo = try #require(host.registry.providers(of: Commands.self).first { $0.name == "echo" })
        let plugin = try plugin(host)
        let before = plugin.counts.sentFromTasks.load(ordering: .relaxed)
        let callers = 16, calls = 200
        // The tasks' barrier: the host's own one-shot signal (they wait suspended, holding no thread).
        let gate = ShutdownSignal()
        let threads = DispatchSemaphore(value: 0), threadsDone = DispatchGroup()
        let wrong = Atomic<Int>(0)
        for caller in 0..<callers {
            threadsDone.enter()
            Thread {
                threads.wait()
                for call in 0..<calls where (try? echo.run(arguments: ["t\(caller)", "\(call)"])) != "t\(caller) \(call)" {
                    wrong.add(1, ordering: .relaxed)
                }
                threadsDone.leave()
            }.start()
        }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    await gate.wait()
                    var mismatched = 0
                    for call in 0..<calls where try await quoter.quote("a\(caller) \(call)") != "quote for a\(caller) \(call)" { mismatched += 1 }
                    return mismatched
                }
            }
            for _ in 0..<callers { threads.signal() }
            gate.fire()
            for try await mismatched in group { wrong.add(mismatched, ordering: .relaxed) }
        }
        await withCheckedContinuation { continuation in
            Thread { threadsDone.wait(); continuation.resume() }.start()
        }
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(plugin.counts.sentFromTasks.load(ordering: .relaxed) - before == callers * calls)
    }

    /// A suspended call past its deadline fails alone (`plugin-timeout`),
    /// seen by the router's reader with no other call to read for; the
    /// child is told to cancel it and the plugin answers the next call.
    @Test func aSuspendedCallPastItsDeadlineFailsAlone() async throws {
        let dir = try TemporaryDirectory()
        let parking = try ConcurrentCallTests.Parking(in: dir.file("tmp"))
        defer { parking.releaseAll() }
        let host = try host(dir)
        defer { host.shutdown() }
        let quoter = try #require(host.registry.handle(for: Quotes.self).first)
        let release = dir.file("tmp/release")
        let late = Task {
            try await IsolatedCallPolicy.withDeadline(.milliseconds(300)) { try await quoter.quote("park \(release)") }
        }
        // Its cancel reaches the plugin only once its deadline passed (at
        // most 300 s here, then the call is let go and answers: red).
        let seen = await withCheckedContinuation { continuation in
            Thread {
                let lines = parking.lines(2)
                if lines.count < 2 { parking.releaseAll() }
                continuation.resume(returning: lines.dropFirst().first)
            }.start()
        }
        #expect(seen == "cancelled")
        do {
            _ = try await late.value
            Issue.record("the call past its deadline answered")
        } catch let error as IsolatedCallError {
            #expect(error.code == .pluginTimeout)
        }
        parking.releaseAll()
        #expect(try await quoter.quote("tea") == "quote for tea")
    }

    /// Cancelling a suspended call's task throws `CancellationError` at
    /// once and cancels the task serving it in the child, which lives on.
    @Test func cancellingASuspendedCallCancelsItInTheChild() async throws {
        let dir = try TemporaryDirectory()
        let parking = try ConcurrentCallTests.Parking(in: dir.file("tmp"))
        defer { parking.releaseAll() }
        let host = try host(dir)
        defer { host.shutdown() }
        let quoter = try #require(host.registry.handle(for: Quotes.self).first)
        let plugin = try plugin(host)
        let before = plugin.counts.sentFromTasks.load(ordering: .relaxed)
        let release = dir.file("tmp/release")
        let call = Task { try await quoter.quote("park \(release)") }
        let parked = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: parking.lines(1).count) }.start()
        }
        #expect(parked == 1)
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        let seen = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: parking.lines(1)) }.start()
        }
        #expect(seen == ["cancelled"], "the child's task was cancelled")
        parking.releaseAll()
        #expect(try await quoter.quote("tea") == "quote for tea")
        #expect(plugin.counts.sentFromTasks.load(ordering: .relaxed) - before == 2)
    }
}
