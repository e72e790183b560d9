import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost
import Testing

/// What a real plugin gets from its context, through the probe fixtures.
@Suite struct ServiceAccessTests {
    /// A host with both probes loaded, and the folder it keeps them, its
    /// data and cache in; the caller shuts the host down and keeps the folder.
    func host(_ settings: HostSettings = HostSettings(), data: String? = nil) throws -> (PluginHost, TemporaryDirectory) {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("ProbeA"), as: "a.so")
        try dir.copy(Fixtures.library("ProbeB"), as: "b.so")
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path, settings: settings, dataDirectory: data ?? dir.file("data"), cacheDirectory: dir.file("cache")))
        host.declareDemoExtensionPoints()
        do {
            try host.loadAll()
        } catch {
            host.shutdown()
            throw error
        }
        return (host, dir)
    }

    func run(_ host: PluginHost, _ name: String, _ arguments: String...) throws -> String {
        try #require(host.registry.provider(of: Commands.self) { $0.name == name }).run(arguments: arguments)
    }

    @Test func declaredServicesAreGrantedAndAnUndeclaredOneIsATypedError() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        #expect(try run(host, "probe-a") == "logging=ok storage=ok configuration=ok events=service-not-declared")
    }

    @Test func theHostConfigurationCanDenyAServiceToOnePlugin() throws {
        let settings = HostSettings(plugins: ["fixture.probe-a": .init(deniedServices: ["plugboard.storage"])], file: "host.json")
        let (host, dir) = try host(settings)
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        #expect(try run(host, "probe-a") == "logging=ok storage=service-denied configuration=ok events=service-not-declared")
        #expect(try run(host, "probe-b") == "logging=ok storage=ok configuration=ok events=service-not-declared")
        let denied = expectServiceError(.serviceDenied) { _ = try run(host, "probe-a", "get", "k") }
        #expect(denied?.message == "plugin fixture.probe-a is denied service 'plugboard.storage' by the host: denied by host.json (plugins.fixture.probe-a.deniedServices)")
    }

    @Test func twoPluginsWithTheSameKeyNeverSeeEachOthersData() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        #expect(try run(host, "probe-a", "put", "../probe-b/shared", "from a") == "stored")
        #expect(try run(host, "probe-b", "put", "../probe-b/shared", "from b") == "stored")
        #expect(try run(host, "probe-a", "get", "../probe-b/shared") == "from a")
        #expect(try run(host, "probe-b", "get", "../probe-b/shared") == "from b")
    }

    @Test func eachPluginSeesItsDefaultsMergedWithItsOwnOverrides() throws {
        let settings = HostSettings(plugins: ["fixture.probe-b": .init(overrides: ["label": .string("custom"), "ratio": .int(2)])])
        let (host, dir) = try host(settings)
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        #expect(try run(host, "probe-a", "config") == #"label="default" limit=10 ratio=0.5"#)
        #expect(try run(host, "probe-b", "config") == #"label="custom" limit=10 ratio=2.0"#)
    }

    @Test func aDisabledPluginIsListedAsDisabled() throws {
        let settings = HostSettings(plugins: ["fixture.probe-b": .init(enabled: false)], file: "host.json")
        let (host, dir) = try host(settings)
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        #expect(host.records.map(\.status) == [.active, .disabled])
        #expect(host.records[1].reason?.contains("host.json (plugins.fixture.probe-b.enabled is false)") == true)
        #expect(host.registry.providers(of: Commands.self).map(\.name) == ["probe-a"])
    }

    /// A plugin without storage asks one with storage to store for it, by
    /// event and by route: the other plugin stores in its own folder, with its
    /// own rights; the asker gains nothing, and asking directly is refused
    /// with what to declare.
    @Test func anUndeclaredServiceIsNotReachableDirectlyOrThroughAnotherPlugin() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("StorageAsker"), as: "a.so")
        try dir.copy(Fixtures.library("StorageRelay"), as: "b.so")
        let data = dir.file("data")
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, dataDirectory: data, cacheDirectory: dir.file("cache")))
        defer { host.shutdown() }
        host.declare(Commands.self)
        try host.loadAll()
        #expect(host.activePluginIDs.sorted() == ["fixture.storage-asker", "fixture.storage-relay"])

        let refusal = "service-not-declared: plugin fixture.storage-asker asked for service 'plugboard.storage' but did not declare it; "
            + "add it to `services:` in the plugin's PluginExport.descriptor call"
        #expect(try run(host, "asker", "direct", "k0", "v0") == refusal)
        #expect(try run(host, "asker", "event", "k1", "v1") == "delivered 1, failures 0")
        #expect(try run(host, "asker", "route", "k2", "v2") == "stored by fixture.storage-relay")
        #expect(try run(host, "asker", "direct", "k3", "v3") == refusal, "asking others did not grant the service")

        let relay = try #require(host.storage(for: "fixture.storage-relay"))
        #expect(try relay.string(for: "k1") == "v1" && relay.string(for: "k2") == "v2")
        #expect(try relay.string(for: "k0") == nil && relay.string(for: "k3") == nil)
        #expect(!FileManager.default.fileExists(atPath: data + "/fixture.storage-asker"), "nothing was stored for the asker")
    }

    /// Real plugins against the storage checks: a symlinked plugin folder
    /// and a full quota cost only the plugin they concern; the other plugin
    /// goes on storing.
    @Test func aStorageTrickOrAFullQuotaCostsOnlyThatPlugin() throws {
        let dir = try TemporaryDirectory(), outside = try TemporaryDirectory()
        try dir.copy(Fixtures.library("ProbeA"), as: "a.so")
        try dir.copy(Fixtures.library("ProbeB"), as: "b.so")
        let data = dir.file("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        symlink(outside.path, data + "/fixture.probe-a")
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path, dataDirectory: data, cacheDirectory: dir.file("cache"), storageQuota: StorageQuota(maximumKeys: 1)))
        defer { host.shutdown() }
        host.declare(Commands.self)
        try host.loadAll()

        let link = expectServiceError(.storageSymlink) { _ = try run(host, "probe-a", "put", "k", "v") }
        #expect(link?.message.contains(data + "/fixture.probe-a") == true, "\(link?.message ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty, "nothing written outside")

        #expect(try run(host, "probe-b", "put", "first", "1") == "stored")
        expectServiceError(.storageQuotaExceeded) { _ = try run(host, "probe-b", "put", "second", "2") }
        #expect(try run(host, "probe-b", "get", "first") == "1", "what was stored stays")
        #expect(host.diagnostics.contains { $0.code == "storage-quota-exceeded" && $0.plugin == "fixture.probe-b" })
        #expect(host.activePluginIDs.sorted() == ["fixture.probe-a", "fixture.probe-b"], "both plugins stay active")
    }
}
