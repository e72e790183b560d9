import Foundation
import Plugboard
import PlugboardHost
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
        let host = PluginHost(configuration: .init(pluginsDirectory: plugins, dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache")))
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
}
