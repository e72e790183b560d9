import Foundation
import Plugboard
import PlugboardDemo
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardLifecycle
import Synchronization
import Testing

/// Each plugin starts on a line of its own (docs/ARCHITECTURE.md, "Start
/// lines"): unrelated plugins start side by side, a plugin after those it
/// requires, and what a plugin asks while it starts starts nothing. The
/// fixtures' inits meet on named semaphores (FixtureSupport's StartGate)
/// whose waits end after 20 s, so a start that is serialised again fails
/// these tests instead of hanging them.
@Suite struct StartLineTests {
    /// A name for this test's semaphores, unique in the machine.
    static func token() -> String { "start-line-\(getpid())-\(UUID().uuidString.prefix(8))" }

    func host(
        _ names: [String], settings: HostSettings = HostSettings(), startTimeout: Duration? = nil,
        diagnostics: (@Sendable (HostDiagnostic) -> Void)? = nil
    ) throws -> (PluginHost, TemporaryDirectory) {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true)
        for name in names { try dir.copy(Fixtures.library(name), as: "plugins/lib\(name).so") }
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: dir.file("plugins"), settings: settings, dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache"))
        if let startTimeout { configuration.isolation.startTimeout = startTimeout }
        configuration.observability.diagnosticSink = diagnostics
        let host = PluginHost(configuration: configuration)
        host.declareDemoExtensionPoints()
        try host.start()
        return (host, dir)
    }

    func commands(_ host: PluginHost) throws -> [String] {
        try host.registry.providers(of: Commands.self).map { try $0.run(arguments: []) }.sorted()
    }

    /// Two threads each start one plugin, behind a barrier; each plugin's
    /// init returns only once the other's has begun. Under one host-wide
    /// lock the second init could not begin until the first returned, and
    /// the first gives up after 20 s (the plugin fails).
    @Test func twoUnrelatedPluginsStartSideBySide() throws {
        let token = Self.token()
        var settings = HostSettings()
        settings.plugins["fixture.parallel.a"] = .init(overrides: ["rendezvous": .string(token)])
        settings.plugins["fixture.parallel.b"] = .init(overrides: ["rendezvous": .string(token)])
        let (host, dir) = try host(["ParallelA", "ParallelB"], settings: settings)
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let next = Atomic<Int>(0)
        concurrently(2, prepare: { next.add(1, ordering: .relaxed).newValue }) { index in
            host.activate(pluginIDs: [index == 1 ? "fixture.parallel.a" : "fixture.parallel.b"])
        }
        #expect(host.records.map(\.status) == [.active, .active], "\(host.records.map(\.message))")
        #expect(try commands(host) == ["a: met b", "b: met a"])
    }

    /// A plugin that requires one being started on another thread waits for
    /// that start, at most the start timeout: then it goes on without it
    /// (the plugin that requires it stays available, with a diagnostic
    /// naming the start), and once the start ends it starts after it.
    @Test func aStartWaitsForTheStartOfWhatItRequiresAtMostTheStartTimeout() throws {
        let token = Self.token()
        var settings = HostSettings()
        settings.plugins["fixture.parallel.a"] = .init(overrides: ["hold": .string(token)])
        let waited = DiagnosticLatch(code: "start-still-running")
        let (host, dir) = try host(["ParallelA", "ParallelNeedsA"], settings: settings, startTimeout: .milliseconds(200),
                                   diagnostics: waited.receive)
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let startingA = DispatchGroup()
        startingA.enter()
        DispatchQueue.global().async {
            host.activate(pluginIDs: ["fixture.parallel.a"])
            startingA.leave()
        }
        // A's init is running (it posted "in"); it goes on when we post "go".
        try StartGateForTests.wait(token, "in")
        host.activate(pluginIDs: ["fixture.parallel.needs-a"])
        let diagnostic = try #require(waited.first)
        #expect(diagnostic.plugin == "fixture.parallel.a")
        #expect(host.records.first { $0.id == "fixture.parallel.needs-a" }?.status == .available,
                "without the wait it would start now and fail: its requirement is not running")
        try StartGateForTests.post(token, "go")
        startingA.wait()
        host.activate(pluginIDs: ["fixture.parallel.needs-a"])
        #expect(host.records.map(\.status) == [.active, .active], "\(host.records.map(\.message))")
        #expect(try commands(host) == ["a: held", "needs-a saw a"])
    }

    /// An init that waits for a thread of its own, which publishes an event
    /// through the plugin's context: the publish starts nothing (the plugin
    /// is starting) and returns, so the init returns. Under the old
    /// host-wide lock the thread's publish waited for the start that waited
    /// for it (the fixture gives up after 20 s and fails).
    @Test func anInitThatWaitsForAThreadThatAsksTheHostReturns() throws {
        let (host, dir) = try host(["InitAsksFromThread", "LazyEvent"])
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        host.activate(pluginIDs: ["fixture.init-asks-from-thread"])
        #expect(host.activePluginIDs == ["fixture.init-asks-from-thread"], "\(host.records.map(\.message))")
        #expect(try commands(host) == ["thread's publish delivered 0"])
        #expect(host.records.first { $0.id == "fixture.lazy-event" }?.status == .available)
        // Asked by the host, the event starts it as usual.
        #expect(host.events.publish(EventPayload(name: "fixture.ping", json: Array("{}".utf8))).delivered == 1)
        #expect(host.activePluginIDs.sorted() == ["fixture.init-asks-from-thread", "fixture.lazy-event"])
    }

    /// The async way in: a lookup that needs a start suspends the caller's
    /// task while the start runs on a thread of its own.
    @Test func anAsyncLookupStartsTheProvidersWithoutBlockingTheCaller() async throws {
        let (host, dir) = try host(["Alpha", "Beta"])
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        #expect(host.activePluginIDs.isEmpty)
        let names = await host.registry.activatedProviders(of: Commands.self).map(\.name)
        #expect(names == ["alpha", "beta"])
        #expect(host.activePluginIDs.sorted() == ["fixture.alpha", "fixture.beta"])
        // Started already: answered from the snapshot.
        #expect(await host.registry.activatedProviders(of: Commands.self).map(\.name) == ["alpha", "beta"])
    }
}

/// The test's side of FixtureSupport's StartGate (same names).
enum StartGateForTests {
    static func post(_ token: String, _ name: String) throws {
        guard let gate = sem_open("/plugboard-\(token)-\(name)", O_CREAT, 0o600, 0), gate != SEM_FAILED else { throw POSIXError(.EINVAL) }
        defer { sem_close(gate) }
        sem_post(gate)
    }

    /// Waits for a post, at most 20 s (then throws: the fixture never got there).
    static func wait(_ token: String, _ name: String) throws {
        guard let gate = sem_open("/plugboard-\(token)-\(name)", O_CREAT, 0o600, 0), gate != SEM_FAILED else { throw POSIXError(.EINVAL) }
        defer { sem_close(gate); sem_unlink("/plugboard-\(token)-\(name)") }
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += 20
        while sem_timedwait(gate, &deadline) != 0 {
            guard errno == EINTR else { throw POSIXError(.ETIMEDOUT) }
        }
    }
}

/// The first diagnostic of one code a host reports, waited for (at most 20 s).
final class DiagnosticLatch: Sendable {
    let code: String
    private let found = Mutex<HostDiagnostic?>(nil)
    private let arrived = DispatchSemaphore(value: 0)

    init(code: String) { self.code = code }

    var receive: @Sendable (HostDiagnostic) -> Void {
        { [self] diagnostic in
            guard diagnostic.code.rawValue == code else { return }
            let first = found.withLock { found in
                defer { if found == nil { found = diagnostic } }
                return found == nil
            }
            if first { arrived.signal() }
        }
    }

    var first: HostDiagnostic? {
        guard arrived.wait(timeout: .now() + 20) == .success else { return nil }
        arrived.signal()
        return found.withLock { $0 }
    }
}
