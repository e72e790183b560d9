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

/// A handle follows the registry: reloads, lazy activation, shutdown, without
/// a new lookup by its holder.
@Suite struct ProviderHandleTests {
    @Test func aHandleSeesTheNewGenerationAfterAReloadAndTheOldAfterARollback() throws {
        let dir = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(imagesDirectory: dir.file("generations"), cacheDirectory: dir.file("cache")))
        defer { host.shutdown() }  // also when a check throws before the shutdown below
        host.declareDemoExtensionPoints()
        #expect(host.load(reloadable: try Fixtures.library("ReloadV1").path).status == .active)
        let commands = host.registry.handle(for: Commands.self)
        #expect(try commands.providers.map { try $0.run(arguments: []) } == ["v1 call 1"])

        #expect(host.reload("fixture.reloadable", from: try Fixtures.library("ReloadV2").path).result == .reloaded)
        #expect(try commands.providers.map { try $0.run(arguments: []) } == ["v2 call 2"])

        // A build that fails to activate is rolled back: the handle stays on v2.
        #expect(host.reload("fixture.reloadable", from: try Fixtures.library("ReloadFailActivate").path).result != .reloaded)
        #expect(try commands.providers.map { try $0.run(arguments: []) } == ["v2 call 3"])
        #expect(host.registry.handle(for: Commands.self) === commands, "one handle per point")

        host.shutdown()
        #expect(commands.providers.isEmpty)
        withExtendedLifetime(dir) {}
    }

    @Test func gettingAHandleActivatesAndItFollowsLaterActivations() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache")))
        host.declareDemoExtensionPoints()
        defer { host.shutdown() }
        try host.start()
        #expect(host.activePluginIDs.isEmpty)
        let commands = host.registry.handle(for: Commands.self)
        #expect(host.activePluginIDs == ["fixture.alpha"])
        #expect(commands.providers.map(\.name) == ["alpha"])

        // Another plugin loaded later: the held handle sees it.
        host.load(files: [try Fixtures.library("Beta").path])
        #expect(commands.providers.map(\.name) == ["alpha", "beta"])
    }

    @Test func aChangeToAnotherPointLeavesAHandlesListAsItWas() throws {
        let dir = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(imagesDirectory: dir.file("generations"), cacheDirectory: dir.file("cache")))
        host.declareDemoExtensionPoints()
        defer { host.shutdown() }
        host.load(files: [try Fixtures.library("Alpha").path])
        let commands = host.registry.handle(for: Commands.self)
        #expect(commands.listsHeld == 1)
        // RouteOwnerA provides no command: the commands list is reused, not retired.
        host.load(files: [try Fixtures.library("RouteOwnerA").path])
        #expect(commands.listsHeld == 1)
        // Beta provides one: its admission (pending) and activation each change the list.
        host.load(files: [try Fixtures.library("Beta").path])
        #expect(commands.listsHeld == 3)
        #expect(commands.providers.map(\.name) == ["alpha", "beta"])
    }
}
