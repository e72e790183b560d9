import Foundation
import Plugboard
import PlugboardHost
import Testing

/// `PluginHost.snapshot()`: what runs, from which bytes, since when, where,
/// with the calls of an isolated plugin counted.
@Suite struct SnapshotTests {
    @Test func theSnapshotSaysWhatRunsAndCountsIsolatedCalls() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try dir.copy(Fixtures.library("Alpha"), as: "plugins/alpha.so")
        _ = try dir.copy(Fixtures.library("IsolationFaults"), as: "plugins/faults.so")
        _ = FileManager.default.createFile(atPath: dir.file("plugins/notes.so"), contents: Data("notes".utf8))
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: dir.file("plugins"), dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache"))
        configuration.isolation.plugins["fixture.isolation-faults"] = .isolated
        let host = PluginHost(configuration: configuration)
        defer { host.shutdown() }
        host.declare(Commands.self)
        let started = Date()
        try host.start()
        host.activateAll()
        let fault = try #require(host.registry.providers(of: Commands.self).first { $0.name == "fault" })
        #expect(try fault.run(arguments: ["echo", "a"]) == "a")
        #expect(throws: IsolatedCallError.self) { try fault.run(arguments: ["segv"]) }
        #expect(try fault.run(arguments: ["echo", "b"]) == "b")

        let snapshot = Dictionary(uniqueKeysWithValues: host.snapshot().map { ($0.id ?? $0.file, $0) })
        let alpha = try #require(snapshot["fixture.alpha"])
        #expect(alpha.status == "active")
        #expect(alpha.generation == 1)
        #expect(alpha.contentHash?.count == 16)
        #expect(alpha.isolation?.mode == "in-process")
        #expect(alpha.calls == nil)
        #expect((alpha.activatedAt ?? .distantPast) >= started.addingTimeInterval(-1))
        let faults = try #require(snapshot["fixture.isolation-faults"])
        #expect(faults.isolation?.mode == "isolated")
        #expect(faults.calls == 3)
        #expect(faults.failures == 1)
        #expect(faults.crashes == 1)
        let notes = try #require(snapshot[dir.file("plugins/notes.so")])
        #expect(notes.status == "rejected")
        #expect(notes.code == "not-elf")
        #expect(notes.generation == nil)
        // Encodable, as a server would expose it.
        let json = try JSONEncoder().encode(host.snapshot())
        #expect(String(decoding: json, as: UTF8.self).contains("\"contentHash\""))
    }
}
