import Foundation
import Plugboard
import PlugboardDemo
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

/// A compatible plugin stays `available` until it is needed: the first
/// lookup of an extension point it provides, or a trigger it declared.
@Suite struct LazyActivationTests {
    func host(_ names: [String]) throws -> (PluginHost, TemporaryDirectory) {
        let dir = try TemporaryDirectory()
        for name in names { try dir.copy(Fixtures.library(name), as: "lib\(name).so") }
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, dataDirectory: dir.file("data")))
        host.declareDemoExtensionPoints()
        return (host, dir)
    }

    @Test func pluginsActivateOnTheFirstLookupOfWhatTheyProvide() throws {
        let (host, dir) = try host(["Alpha", "Beta", "LazyStartup", "LazyEvent"])
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let records = try host.start()
        #expect(records.map(\.status) == [.available, .available, .available, .active])
        #expect(host.activePluginIDs == ["fixture.startup"])
        #expect(records.first { $0.id == "fixture.lazy-event" }?.activation == ["event:fixture.ping"])

        #expect(host.registry.providers(of: Commands.self).map(\.name) == ["alpha", "beta", "startup"])
        #expect(Set(host.activePluginIDs) == ["fixture.startup", "fixture.alpha", "fixture.beta"])
        // The event-triggered one provides no command: still waiting.
        #expect(host.records.first { $0.id == "fixture.lazy-event" }?.status == .available)
        // Read path after activation: the snapshot only, same answer.
        #expect(host.registry.providers(of: Commands.self).map(\.name) == ["alpha", "beta", "startup"])
    }

    @Test func discoveringAgainKeepsOnePluginPerFile() throws {
        let (host, dir) = try host(["Alpha", "Beta"])
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        #expect(try host.discover().map(\.status) == [.available, .available])
        #expect(try host.start().map(\.status) == [.available, .available])
        #expect(try host.loadAll().map(\.status) == [.active, .active])
        #expect(try host.discover().map(\.status) == [.active, .active])
        #expect(host.records.count == 2, "\(host.records.map(\.message))")
    }

    @Test func anEventTriggerActivatesThePluginBeforeTheEventIsDelivered() throws {
        let (host, dir) = try host(["LazyEvent"])
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        try host.start()
        let pongs = Atomic<Int>(0)
        let subscription = host.events.subscribe(to: "fixture.pong") { _ in pongs.add(1, ordering: .relaxed) }
        defer { subscription.cancel() }
        #expect(host.events.publish(EventPayload(name: "other", json: Array("{}".utf8))).delivered == 0)
        #expect(host.activePluginIDs.isEmpty)
        let delivery = host.events.publish(EventPayload(name: "fixture.ping", json: Array("{}".utf8)))
        #expect(delivery.delivered == 1)
        #expect(pongs.load(ordering: .relaxed) == 1)
        #expect(host.activePluginIDs == ["fixture.lazy-event"])
    }

    /// A plugin's `activate` publishes the event that would start another
    /// plugin: the host is inside that start, so the defined answer holds
    /// (what is active gets the event; nothing starts; no deadlock), set by
    /// the publisher being a plugin that is starting (``StartingPlugins``),
    /// not by a thread check or a flag at call sites.
    /// The event started from the host afterwards starts it as usual.
    @Test func aTriggerFiredFromAPluginsOwnActivateStartsNothing() throws {
        let (host, dir) = try host(["ActivateAsks", "LazyEvent"])
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        try host.start()
        #expect(host.activePluginIDs == ["fixture.activate-asks"])
        let asks = try #require(host.registry.providers(of: Commands.self).first { $0.name == "asked" })
        #expect(try asks.run(arguments: []) == "delivered 0")
        #expect(host.records.first { $0.id == "fixture.lazy-event" }?.status == .available)
        #expect(host.events.publish(EventPayload(name: "fixture.ping", json: Array("{}".utf8))).delivered == 1)
        #expect(host.activePluginIDs == ["fixture.activate-asks", "fixture.lazy-event"])
    }

    @Test func aRouteTriggerActivatesThePluginBeforeThePathIsRouted() throws {
        let (host, dir) = try host(["LazyRoute"])
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        try host.start()
        expectServiceError(.routeNotFound) { _ = try host.router.navigate(to: "/lazyness/1") }
        #expect(host.activePluginIDs.isEmpty)
        #expect(try host.router.navigate(to: "/lazy/7", as: [String].self) == ["lazy", "7"])
        #expect(host.activePluginIDs == ["fixture.lazy-route"])
    }

    /// Many threads ask at the same instant: one activation, every thread
    /// sees the activated providers.
    @Test func activationHappensOnceWhenManyThreadsAskAtOnce() throws {
        for round in 0..<10 {
            let (host, dir) = try host(["Alpha", "Beta"])
            try host.start()
            let seen = Mutex<[[String]]>([])
            concurrently(8) {
                let names = host.registry.providers(of: Commands.self).map(\.name)
                seen.withLock { $0.append(names) }
            }
            #expect(seen.withLock { $0 }.allSatisfy { $0 == ["alpha", "beta"] }, "round \(round): \(seen.withLock { $0 })")
            #expect(host.activePluginIDs.sorted() == ["fixture.alpha", "fixture.beta"], "round \(round)")
            #expect(host.records.filter { $0.status == .active }.count == 2)
            host.shutdown()
            withExtendedLifetime(dir) {}
        }
    }

    @Test func listAndInspectNeverRunPluginCodeInTheirOwnProcess() throws {
        let dir = try TemporaryDirectory()
        let plugin = "-plugin-under-test.so"
        try dir.copy(Fixtures.library("Alpha"), as: "x\(plugin)")
        // The dynamic loader reports every initializer it calls, one log file per process.
        for command in [["list", "--plugins", dir.path], ["inspect", dir.file("x\(plugin)")]] {
            let cache = try TemporaryDirectory(), logs = try TemporaryDirectory()
            let process = Process()
            process.executableURL = try Fixtures.executable("plugboard")
            process.arguments = command + ["--cache", cache.path]
            process.environment = ProcessInfo.processInfo.environment.merging(
                ["LD_DEBUG": "files", "LD_DEBUG_OUTPUT": logs.file("ld")]) { $1 }
            process.standardError = FileHandle.nullDevice
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            // Its id comes from the descriptor: a scanner process loaded it.
            #expect(text.contains("fixture.alpha") && text.contains("available"), "\(text)")
            var inits: [Int32: [String]] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: logs.path) {
                guard let pid = Int32(name.dropFirst("ld.".count)) else { continue }
                inits[pid] = try String(contentsOfFile: logs.file(name), encoding: .utf8)
                    .split(separator: "\n").filter { $0.contains("calling init:") }.map(String.init)
            }
            let own = inits[process.processIdentifier] ?? []
            #expect(!own.isEmpty, "LD_DEBUG must report the host's own initializers")
            #expect(!own.contains { $0.hasSuffix(plugin) }, "\(command[0]) ran plugin code: \(own.filter { $0.hasSuffix(plugin) })")
        }
    }

    /// `plugboard run NAME` activates the plugins that declare `command:NAME`
    /// and those that declare no command, never one that declared others.
    @Test func aCommandTriggerActivatesOnlyThePluginsThatMayProvideTheName() throws {
        let (host, dir) = try host(["Alpha", "BenchPlugin"])
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let records = try host.start()
        #expect(records.first { $0.id == "bench.plugin.number.00000" }?.activation == ["command:bench"])

        // BenchPlugin declared only `bench`: asking for another name leaves it
        // alone; Alpha declared nothing, so it may provide any name.
        let forGreet = host.commandProviders(named: "greet")
        #expect(host.activePluginIDs == ["fixture.alpha"])
        #expect(forGreet.map(\.pluginID) == ["fixture.alpha"])

        let forBench = host.commandProviders(named: "bench")
        #expect(Set(host.activePluginIDs) == ["fixture.alpha", "bench.plugin.number.00000"])
        #expect(forBench.compactMap { ($0.provider as? any Command)?.name }.sorted() == ["alpha", "bench"])
    }

    /// A plugin that declares `other` but provides `told` is skipped for
    /// `told`, and once something activates it the mismatch is reported.
    @Test func runSaysWhenAPluginProvidesACommandItDidNotDeclare() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        try dir.copy(Fixtures.library("MisdeclaredCommand"), as: "libMisdeclared.so")
        let options = ["--plugins", dir.path, "--cache", work.file("cache"), "--data", work.file("data")]
        let told = try runProcess(Fixtures.executable("plugboard"), ["run", "told"] + options)
        #expect(told.status == 1)
        #expect(told.stderr.contains("no plugin provides command 'told'; available: alpha, other"), "\(told.stderr)")
        #expect(!told.stderr.contains("[undeclared-command]"), "not activated, so not yet seen: \(told.stderr)")
        let other = try runProcess(Fixtures.executable("plugboard"), ["run", "other"] + options)
        #expect(other.status == 1)
        #expect(other.stderr.contains("plugin fixture.misdeclared-command provides command 'told' without declaring it"), "\(other.stderr)")
        #expect(other.stderr.contains("`plugboard run told` does not activate it"), "\(other.stderr)")
        #expect(other.stderr.contains("[undeclared-command]"), "\(other.stderr)")
    }

    @Test func aCommandTriggerNamesACommandOrIsRefused() {
        #expect(PluginTrigger(ActivationTrigger.command("greet").encoded) == .command("greet"))
        #expect(PluginTrigger("command:report.daily-v2_b") == .command("report.daily-v2_b"))
        for bad in ["command:", "command:two words", "command:greet\u{1B}[2J", "command:" + String(repeating: "x", count: 200)] {
            #expect(PluginTrigger(bad) == nil, "\(bad.debugDescription) was accepted")
        }
    }

    /// Every spelling the SDK makes parses to its kind, once, at the scan.
    @Test func eachTriggerKindParsesToItsType() {
        #expect(PluginTrigger(ActivationTrigger.startup.encoded) == .startup)
        #expect(PluginTrigger(ActivationTrigger.event("cart.changed").encoded) == .event("cart.changed"))
        #expect(PluginTrigger(ActivationTrigger.route(prefix: "/shop//orders/").encoded) == .route(["shop", "orders"]))
        for bad in ["Startup", "route:shop", "event:", "route:/a b", "hook:x"] {
            #expect(PluginTrigger(bad) == nil, "\(bad.debugDescription) was accepted")
        }
    }
}
