import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost
import Testing

/// What a real plugin gets from its context, through the probe fixtures.
@Suite struct ServiceAccessTests {
    func host(_ settings: HostSettings = HostSettings(), data: String? = nil) throws -> (PluginHost, TemporaryDirectory) {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("ProbeA"), as: "a.so")
        try dir.copy(Fixtures.library("ProbeB"), as: "b.so")
        let host = PluginHost(configuration: .init(pluginsDirectory: dir.path, settings: settings, dataDirectory: data ?? dir.file("data")))
        host.declareDemoExtensionPoints()
        try host.loadAll()
        return (host, dir)
    }

    func run(_ host: PluginHost, _ name: String, _ arguments: String...) throws -> String {
        try #require(host.registry.provider(of: Commands.self) { $0.name == name }).run(arguments: arguments)
    }

    @Test func declaredServicesAreGrantedAndAnUndeclaredOneIsATypedError() throws {
        let (host, dir) = try host()
        defer { withExtendedLifetime(dir) {} }
        #expect(try run(host, "probe-a") == "logging=ok storage=ok configuration=ok events=service-not-declared")
    }

    @Test func theHostConfigurationCanDenyAServiceToOnePlugin() throws {
        let settings = HostSettings(plugins: ["fixture.probe-a": .init(deniedServices: ["plugboard.storage"])], file: "host.json")
        let (host, dir) = try host(settings)
        defer { withExtendedLifetime(dir) {} }
        #expect(try run(host, "probe-a") == "logging=ok storage=service-denied configuration=ok events=service-not-declared")
        #expect(try run(host, "probe-b") == "logging=ok storage=ok configuration=ok events=service-not-declared")
        let denied = expectServiceError(.serviceDenied) { _ = try run(host, "probe-a", "get", "k") }
        #expect(denied?.message == "plugin fixture.probe-a is denied service 'plugboard.storage' by the host: denied by host.json (plugins.fixture.probe-a.deniedServices)")
    }

    @Test func twoPluginsWithTheSameKeyNeverSeeEachOthersData() throws {
        let (host, dir) = try host()
        defer { withExtendedLifetime(dir) {} }
        #expect(try run(host, "probe-a", "put", "../probe-b/shared", "from a") == "stored")
        #expect(try run(host, "probe-b", "put", "../probe-b/shared", "from b") == "stored")
        #expect(try run(host, "probe-a", "get", "../probe-b/shared") == "from a")
        #expect(try run(host, "probe-b", "get", "../probe-b/shared") == "from b")
    }

    @Test func eachPluginSeesItsDefaultsMergedWithItsOwnOverrides() throws {
        let settings = HostSettings(plugins: ["fixture.probe-b": .init(overrides: ["label": .string("custom"), "ratio": .int(2)])])
        let (host, dir) = try host(settings)
        defer { withExtendedLifetime(dir) {} }
        #expect(try run(host, "probe-a", "config") == #"label="default" limit=10 ratio=0.5"#)
        #expect(try run(host, "probe-b", "config") == #"label="custom" limit=10 ratio=2.0"#)
    }

    @Test func aDisabledPluginIsListedAsDisabled() throws {
        let settings = HostSettings(plugins: ["fixture.probe-b": .init(enabled: false)], file: "host.json")
        let (host, dir) = try host(settings)
        defer { withExtendedLifetime(dir) {} }
        #expect(host.records.map(\.status) == [.active, .disabled])
        #expect(host.records[1].reason?.contains("host.json (plugins.fixture.probe-b.enabled is false)") == true)
        #expect(host.registry.providers(of: Commands.self).map(\.name) == ["probe-a"])
    }
}
