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
import Testing

@Suite struct HostSettingsTests {
    func load(_ json: String) throws -> (HostSettings, String) {
        let dir = try TemporaryDirectory()
        let path = try dir.write(Data(json.utf8), as: "host.json")
        return (HostSettings.load(from: path), path)
    }

    /// `"children"` sizes an isolated plugin's pool; a count outside 1...64
    /// is an error naming the key, and the host's default applies.
    @Test func childrenSizeAPoolAndABadCountIsAnError() throws {
        let (config, _) = try load(#"{ "plugins": { "a.one": { "isolated": true, "children": 3 }, "a.two": { "isolated": true, "children": 0 } } }"#)
        var configuration = PluginHost.Configuration.with(pluginsDirectory: "/nonexistent")
        configuration.settings = config
        configuration.isolation.others = PluginIsolation(isolated: true, children: 2)
        #expect(configuration.isolation(of: "a.one").children == 3)
        #expect(configuration.isolation(of: "a.two").children == 2, "the host's default, not a count clamped from 0")
        let bad = try #require(config.diagnostics.first { $0.keyPath == "plugins.a.two.children" })
        #expect(bad.code == "config-invalid-type" && bad.message.contains("from 1 to 64"))
    }

    /// `"resources"` sets a plugin's children's bounds over the host's; a
    /// bad value is an error naming the key, and the host's bound applies.
    @Test func resourcesBoundAPluginsChildrenAndABadValueIsAnError() throws {
        let (config, _) = try load(#"""
            { "plugins": { "a.one": { "resources": { "memory": 268435456, "tasks": 64, "cpu": 0.5, "callsInFlight": 128 } },
                           "a.two": { "resources": { "memory": 12, "tasks": "many", "cpus": 2, "callsInFlight": 0 } } } }
            """#)
        var configuration = PluginHost.Configuration.with(pluginsDirectory: "/nonexistent")
        configuration.settings = config
        configuration.isolation.others = .isolated
        let one = configuration.isolation(of: "a.one").limits
        #expect(one.memory == 256 << 20 && one.tasks == 64 && one.cpuCores == 0.5 && one.callsInFlight == 128)
        let two = configuration.isolation(of: "a.two").limits
        #expect(two.memory == PluginIsolation.Limits().memory && two.tasks == PluginIsolation.Limits().tasks)
        #expect(config.diagnostics.first { $0.keyPath == "plugins.a.two.resources.memory" }?.message.contains("at least 1048576") == true)
        #expect(config.diagnostics.first { $0.keyPath == "plugins.a.two.resources.tasks" }?.code == "config-invalid-type")
        #expect(config.diagnostics.first { $0.keyPath == "plugins.a.two.resources.cpus" }?.code == "config-unknown-key")
        #expect(config.diagnostics.first { $0.keyPath == "plugins.a.two.resources.callsInFlight" }?.message.contains("1 to 1024") == true)
        #expect(two.callsInFlight == PluginIsolation.Limits().callsInFlight)
    }

    @Test func malformedJSONIsOneErrorNamingTheFileAndNothingApplies() throws {
        let (config, path) = try load(#"{ "plugins": { "a.b": { "enabled": false, } "#)
        #expect(config.plugins.isEmpty)
        let diagnostic = try #require(config.diagnostics.first)
        #expect(diagnostic.code == "config-malformed")
        #expect(diagnostic.file == path)
        #expect(diagnostic.description.hasPrefix(path))
    }

    @Test func wrongTypesAreReportedWithKeyPathsAndTheRestApplies() throws {
        let (config, path) = try load("""
        { "plugins": {
            "a.one": { "enabled": "no", "config": { "limit": 3 } },
            "a.two": { "enabled": false, "deniedServices": ["plugboard.storage", 7], "colour": 1 },
            "a.three": 5
        }, "extra": true }
        """)
        let byPath = Dictionary(config.diagnostics.map { ($0.keyPath ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byPath["plugins.a.one.enabled"]?.code == "config-invalid-type")
        #expect(byPath["plugins.a.one.enabled"]?.message.contains("must be a boolean, found string") == true)
        #expect(byPath["plugins.a.two.deniedServices"]?.code == "config-invalid-type")
        #expect(byPath["plugins.a.two.colour"]?.code == "config-unknown-key")
        #expect(byPath["plugins.a.three"]?.code == "config-invalid-type")
        #expect(byPath["extra"]?.code == "config-unknown-key")
        #expect(config.diagnostics.allSatisfy { $0.file == path })
        #expect(config.plugins["a.one"]?.enabled == true, "a bad value keeps the default")
        #expect(config.plugins["a.one"]?.overrides == ["limit": .int(3)])
        #expect(config.plugins["a.two"]?.enabled == false)
        #expect(config.plugins["a.two"]?.deniedServices == ["plugboard.storage"])
    }

    @Test func nullsAreReportedNotSkipped() throws {
        let (config, _) = try load(#"{ "plugins": { "a.one": { "enabled": null, "deniedServices": [null], "config": { "limit": null } } } }"#)
        let byPath = Dictionary(config.diagnostics.map { ($0.keyPath ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byPath["plugins.a.one.enabled"]?.message.contains("found null") == true)
        #expect(byPath["plugins.a.one.deniedServices"]?.message.contains("found null") == true)
        #expect(byPath["plugins.a.one.config.limit"]?.code == "config-invalid-type")
        #expect(config.plugins["a.one"] == HostSettings.PluginSettings())
    }

    @Test func overridesMergeKeyByKeyAndBadOnesKeepTheDefault() throws {
        let (config, path) = try load("""
        { "plugins": { "a.one": { "config": { "limit": "ten", "label": "custom", "ratio": 2, "missing": 1 } } } }
        """)
        let defaults: [String: ConfigValue] = ["limit": .int(10), "label": .string("default"), "ratio": .double(0.5), "flag": .bool(true)]
        let (values, problems) = config.merged(for: "a.one", defaults: defaults)
        #expect(values == ["limit": .int(10), "label": .string("custom"), "ratio": .double(2), "flag": .bool(true)])
        let byPath = Dictionary(problems.map { ($0.keyPath ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byPath["plugins.a.one.config.limit"]?.code == "config-type-mismatch")
        #expect(byPath["plugins.a.one.config.limit"]?.message.contains("expected integer like the default 10, found string \"ten\"") == true)
        #expect(byPath["plugins.a.one.config.missing"]?.code == "config-unknown-key")
        #expect(problems.allSatisfy { $0.file == path && $0.plugin == "a.one" })
    }

    @Test func aConfigurationNamingAnUnknownPluginIsAWarning() throws {
        let (config, path) = try load(#"{ "plugins": { "fixture.nobody": { "enabled": false } } }"#)
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, settings: config, cacheDirectory: cache.path))
        defer { host.shutdown() }
        host.declareDemoExtensionPoints()
        let records = try host.loadAll()
        #expect(records.map(\.status) == [.active])
        let warning = try #require(host.diagnostics.first { $0.code == "config-unknown-plugin" })
        #expect(warning.file == path)
        #expect(warning.keyPath == "plugins.fixture.nobody")
    }
}
