import Foundation
import Plugboard
import PlugboardHost
import Synchronization
import Testing

/// A running host picks up what was installed, replaced and removed, when
/// told to look again (`refresh()`): real files renamed into place.
@Suite struct LiveUpdateTests {
    /// Writes `source`'s bytes under a temporary name in `folder`, then
    /// renames it to `name`: how a file is installed safely.
    func install(_ source: URL, as name: String, in folder: String) throws {
        let temporary = "\(folder)/.\(name).partial"
        try FileManager.default.copyItem(atPath: source.path, toPath: temporary)
        #expect(rename(temporary, "\(folder)/\(name)") == 0)
    }

    func run(_ host: PluginHost, _ name: String) throws -> String {
        guard let command = host.registry.providers(of: Commands.self).first(where: { $0.name == name }) else { return "no command \(name)" }
        return try command.run(arguments: [])
    }

    @Test func aRefreshAddsReloadsAndRetires() throws {
        let dir = try TemporaryDirectory()
        let plugins = dir.file("plugins")
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for (name, file) in [("Alpha", "alpha.so"), ("Beta", "beta.so"), ("ReloadV1", "reloadable.so"), ("DepBase", "base.so"), ("DepMiddle", "middle.so")] {
            try install(Fixtures.library(name), as: file, in: plugins)
        }
        let host = PluginHost(configuration: .with(pluginsDirectory: plugins, dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache")))
        defer { host.shutdown() }
        host.declare(Commands.self)
        try host.start()
        host.activateAll()
        #expect(try run(host, "reloadable") == "v1 call 1")
        #expect(try run(host, "reloadable") == "v1 call 2")

        // Nothing changed: nothing happens.
        let quiet = try host.refresh()
        #expect(quiet.added.isEmpty && quiet.reloaded.isEmpty && quiet.removed.isEmpty && quiet.reexamined.isEmpty)

        try install(Fixtures.library("Gamma"), as: "gamma.so", in: plugins)
        try FileManager.default.removeItem(atPath: "\(plugins)/reloadable.so")
        try install(Fixtures.library("ReloadV2"), as: "reloadable.so", in: plugins)
        try FileManager.default.removeItem(atPath: "\(plugins)/beta.so")
        try FileManager.default.removeItem(atPath: "\(plugins)/base.so")
        let outcome = try host.refresh()

        #expect(outcome.added.map(\.id) == ["fixture.gamma"])
        #expect(outcome.added.first?.status == .available)
        #expect(outcome.reloaded.map(\.pluginID) == ["fixture.reloadable"])
        #expect(outcome.reloaded.first?.result == .reloaded)
        #expect(outcome.reloaded.first?.stateNote == "state handed over")
        #expect(Set(outcome.removed) == ["fixture.beta", "fixture.dep.base"])
        #expect(try run(host, "reloadable") == "v2 call 3")
        #expect(try run(host, "beta") == "no command beta")
        #expect(try run(host, "gamma") == "gamma")
        #expect(!host.records.contains { $0.id == "fixture.beta" || $0.id == "fixture.dep.base" })
        // What required the removed base stopped with it.
        let middle = try #require(host.records.first { $0.id == "fixture.dep.middle" })
        #expect(middle.code == "dependency-missing")
        #expect(!host.activePluginIDs.contains("fixture.dep.middle"))
        #expect(host.records.filter { $0.path.hasSuffix("/reloadable.so") }.map(\.generation) == [2])

        // And once more: nothing left to do.
        let after = try host.refresh()
        #expect(after.added.isEmpty && after.reloaded.isEmpty && after.removed.isEmpty)
    }

    /// Four threads call every command without pause while 50 changes land
    /// (a plugin installed and removed, another replaced by a new build),
    /// each followed by a refresh: no call fails, every change is live when
    /// its refresh returns, and the slowest refresh is reported.
    @Test func callsKeepWorkingWhileFiftyChangesLand() throws {
        let dir = try TemporaryDirectory()
        let plugins = dir.file("plugins")
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try install(Fixtures.library("Alpha"), as: "alpha.so", in: plugins)
        try install(Fixtures.library("ReloadV1"), as: "reloadable.so", in: plugins)
        let host = PluginHost(configuration: .with(pluginsDirectory: plugins, dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache")))
        defer { host.shutdown() }
        host.declare(Commands.self)
        try host.start()
        host.activateAll()

        let stop = Atomic<Bool>(false)
        let calls = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let barrier = try EventPipe()
        let done = DispatchGroup()
        for _ in 0..<4 {
            done.enter()
            Thread {
                defer { done.leave() }
                barrier.wait()
                while !stop.load(ordering: .relaxed) {
                    for command in host.registry.providers(of: Commands.self) {
                        do {
                            _ = try command.run(arguments: [])
                            calls.add(1, ordering: .relaxed)
                        } catch {
                            failures.withLock { $0.append("\(command.name): \(error)") }
                        }
                    }
                }
            }.start()
        }
        barrier.signal(count: 4)
        var slowest = Duration.zero
        for change in 0..<50 {
            let clock = ContinuousClock.now
            switch change % 4 {
            case 0: try install(Fixtures.library("Gamma"), as: "gamma.so", in: plugins)
            case 1: try install(Fixtures.library("ReloadV2"), as: "reloadable.so", in: plugins)
            case 2: try FileManager.default.removeItem(atPath: "\(plugins)/gamma.so")
            default: try install(Fixtures.library("ReloadV1"), as: "reloadable.so", in: plugins)
            }
            let outcome = try host.refresh()
            slowest = max(slowest, ContinuousClock.now - clock)
            let names = Set(host.registry.providers(of: Commands.self).map(\.name))
            switch change % 4 {
            case 0: #expect(outcome.added.map(\.id) == ["fixture.gamma"] && names.contains("gamma"), "change \(change)")
            case 2: #expect(outcome.removed == ["fixture.gamma"] && !names.contains("gamma"), "change \(change)")
            default:
                #expect(outcome.reloaded.map(\.result) == [.reloaded], "change \(change): \(outcome.reloaded.map(\.error))")
                let version = try run(host, "reloadable")
                #expect(version.hasPrefix(change % 4 == 1 ? "v2" : "v1"), "change \(change): \(version)")
            }
        }
        stop.store(true, ordering: .relaxed)
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(calls.load(ordering: .relaxed) > 0)
        #expect(host.activePluginIDs.contains("fixture.alpha"))
        // Reported, not asserted (tests never time): the bound a change took.
        print("live updates: 50 changes, slowest install-to-live \(slowest), \(calls.load(ordering: .relaxed)) calls, none failed")
    }

    /// With the watch on, a file renamed into place or removed reaches the
    /// running host by itself (synchronised on the `plugins-refreshed`
    /// diagnostic each refresh reports).
    @Test func aWatchingHostPicksUpInstallsAndRemovalsByItself() throws {
        let dir = try TemporaryDirectory()
        let plugins = dir.file("plugins")
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try install(Fixtures.library("Alpha"), as: "alpha.so", in: plugins)
        let refreshed = try EventPipe()
        let reports = Mutex<[String]>([])
        var configuration = PluginHost.Configuration.with(pluginsDirectory: plugins, dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache"))
        configuration.watching.pluginsDirectory = true
        configuration.observability.diagnosticSink = { diagnostic in
            guard diagnostic.code == "plugins-refreshed" else { return }
            reports.withLock { $0.append(diagnostic.message) }
            refreshed.signal()
        }
        let host = PluginHost(configuration: configuration)
        defer { host.shutdown() }
        host.declare(Commands.self)
        try host.start()

        try install(Fixtures.library("Gamma"), as: "gamma.so", in: plugins)
        refreshed.wait()
        #expect(try run(host, "gamma") == "gamma")
        try FileManager.default.removeItem(atPath: "\(plugins)/gamma.so")
        refreshed.wait()
        #expect(try run(host, "gamma") == "no command gamma")
        #expect(reports.withLock { $0 } == ["added fixture.gamma (available)", "removed fixture.gamma"])
    }

    /// A handle taken before a plugin is installed live reaches it after the
    /// refresh that finds it: a handle's reads check nothing, so the refresh
    /// activates what provides a point with a handle (a server's hot path).
    @Test func aHandleTakenBeforeALiveInstallReachesTheNewProvider() throws {
        let dir = try TemporaryDirectory()
        let plugins = dir.file("plugins")
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try install(Fixtures.library("Alpha"), as: "alpha.so", in: plugins)
        let host = PluginHost(configuration: .with(pluginsDirectory: plugins, dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache")))
        defer { host.shutdown() }
        host.declare(Commands.self)
        try host.start()
        let commands = host.registry.handle(for: Commands.self)
        let before = commands.providers.map(\.name)
        try install(Fixtures.library("ReloadV1"), as: "reloadable.so", in: plugins)
        let outcome = try host.refresh()
        #expect(outcome.added.map(\.id) == ["fixture.reloadable"])
        let after = commands.providers.map(\.name)
        #expect(after.contains("reloadable") && !before.contains("reloadable"), "\(before) → \(after)")
        #expect(try commands.providers.first { $0.name == "reloadable" }?.run(arguments: []) == "v1 call 1")
    }
}
