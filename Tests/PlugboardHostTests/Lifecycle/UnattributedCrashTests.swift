import Foundation
import Plugboard
import PlugboardDemo
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardCatalog
import Synchronization
import Testing

/// Plugins start side by side, so a host that dies with several inits open
/// and no stack frame naming one (SIGKILL, an OOM kill, `exit`) left notes
/// that cannot say which plugin it was: the next host quarantines none,
/// says so, and starts plugins one at a time, so a crash again names its
/// plugin (docs/ARCHITECTURE.md, "Start lines").
@Suite struct UnattributedCrashTests {
    /// A dead host's note file: the inits of `plugins` (file name, id) open.
    func writeDeadNotes(_ plugins: [(file: String, id: String)], plugins directory: String, journal: String) throws {
        try FileManager.default.createDirectory(atPath: journal, withIntermediateDirectories: true)
        var bytes: [UInt8] = []
        for plugin in plugins {
            let path = directory + "/" + plugin.file
            let note = CrashJournal.Note(
                pluginID: plugin.id, path: path, identity: FileIdentity.of(path: path), phase: .`init`, date: Quarantine.now())
            bytes += try #require(CrashJournal.line(note)) + [0x0A]
        }
        try Data(bytes).write(to: URL(fileURLWithPath: journal + "/dead-host.note"))
    }

    @Test func aCrashWithSeveralStartsOpenQuarantinesNoneAndStartsOneAtATime() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true)
        try dir.copy(Fixtures.library("ParallelA"), as: "plugins/libParallelA.so")
        try dir.copy(Fixtures.library("ParallelB"), as: "plugins/libParallelB.so")
        try writeDeadNotes([("libParallelA.so", "fixture.parallel.a"), ("libParallelB.so", "fixture.parallel.b")],
                           plugins: dir.file("plugins"), journal: dir.file("cache/journal"))
        // Each init waits 2 s at most to meet the other's: taking turns, the
        // first gives up (failed), the second finds the first's post.
        let token = StartLineTests.token()
        var settings = HostSettings()
        for id in ["fixture.parallel.a", "fixture.parallel.b"] {
            settings.plugins[id] = .init(overrides: ["rendezvous": .string(token), "patience-ms": .int(2_000)])
        }
        try withHost(.with(pluginsDirectory: dir.file("plugins"), settings: settings, dataDirectory: dir.file("data"),
                           cacheDirectory: dir.file("cache"))) { host in
            try host.start()
            #expect(host.records.map(\.status) == [.available, .available], "none quarantined: \(host.records.map(\.message))")
            let warning = try #require(host.diagnostics.first { $0.code == "host-crash-unattributed" })
            #expect(warning.message.contains("fixture.parallel.a") && warning.message.contains("fixture.parallel.b"))
            #expect(warning.message.contains("one at a time"))

            let next = Atomic<Int>(0)
            concurrently(2, prepare: { next.add(1, ordering: .relaxed).newValue }) { index in
                host.activate(pluginIDs: [index == 1 ? "fixture.parallel.a" : "fixture.parallel.b"])
            }
            // Side by side both would meet and start; one at a time, one cannot.
            #expect(host.records.map(\.status).sorted { $0.rawValue < $1.rawValue } == [.active, .failed],
                    "\(host.records.map(\.message))")
        }
        for name in ["a", "b"] { sem_unlink("/plugboard-\(token)-\(name)") }
    }

    /// One plugin's note open: it is the one, as before.
    @Test func aCrashWithOneStartOpenQuarantinesThatPlugin() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true)
        try dir.copy(Fixtures.library("ParallelA"), as: "plugins/libParallelA.so")
        try dir.copy(Fixtures.library("ParallelB"), as: "plugins/libParallelB.so")
        try writeDeadNotes([("libParallelA.so", "fixture.parallel.a")], plugins: dir.file("plugins"), journal: dir.file("cache/journal"))
        try withHost(.with(pluginsDirectory: dir.file("plugins"), dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache"))) { host in
            try host.start()
            #expect(host.records.map(\.status) == [.quarantined, .available], "\(host.records.map(\.message))")
            #expect(!host.diagnostics.contains { $0.code == "host-crash-unattributed" })
        }
    }
}
