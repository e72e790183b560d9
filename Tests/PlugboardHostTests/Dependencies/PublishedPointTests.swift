import Foundation
import Plugboard
import PlugboardHost
import Testing

/// A plugin publishes an extension point of its own and reads the providers
/// of the plugins that require it (``Services/Extensions``): the host never
/// declared the point.
@Suite struct PublishedPointTests {
    /// Lazily (the contributor activates when the publisher first looks) and
    /// eagerly (both active before the point was declared: the providers
    /// left out then are collected).
    @Test(arguments: [false, true]) func aPluginReadsTheProvidersOfItsOwnPoint(activatedFirst: Bool) throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in ["ExtContributor", "ExtPublisher"] { _ = try dir.copy(Fixtures.library(name), as: "plugins/\(name).so") }
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.file("plugins"), cacheDirectory: dir.file("cache")))
        defer { host.shutdown() }
        host.declare(Commands.self)
        try host.start()
        if activatedFirst {
            host.activateAll()
            #expect(host.activePluginIDs == ["fixture.ext.publisher", "fixture.ext.contributor"])
        }
        let sections = try #require(host.registry.providers(of: Commands.self).first { $0.name == "sections" })
        #expect(try sections.run(arguments: []) == "from-contributor")
        #expect(host.activePluginIDs == ["fixture.ext.publisher", "fixture.ext.contributor"])
        #expect(host.registry.declaredInterfaces.map(\.id).contains("dev.plugboard.demo.screen-section"))
    }

    /// The service does not cross to an isolated child: refused before the
    /// plugin's code runs.
    @Test func anIsolatedPublisherIsRefused() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.copy(Fixtures.library("ExtPublisher"), as: "publisher.so")
        var configuration = PluginHost.Configuration.with(pluginsDirectory: dir.path, cacheDirectory: dir.file("cache"))
        configuration.isolation.others = .isolated
        let host = PluginHost(configuration: configuration)
        defer { host.shutdown() }
        host.declare(Commands.self)
        try host.start()
        host.activateAll()
        let record = try #require(host.records.first { $0.id == "fixture.ext.publisher" })
        #expect(record.code == "isolation-unsupported-service")
        #expect(record.reason?.contains("plugboard.extensions") == true)
    }
}
