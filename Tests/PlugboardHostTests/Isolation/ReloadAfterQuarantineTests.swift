import Foundation
import Plugboard
import PlugboardHost
import Testing

/// The owner keeps one account of a plugin when two changes meet: the old
/// generation of an isolated plugin goes over its restart budget while a
/// reload of it is under way (here, from the reload's `beforeActing`).
@Suite struct ReloadAfterQuarantineTests {
    @Test func theNewGenerationIsActiveAndKeepsItsIDWhenTheOldOneWasQuarantinedMeanwhile() throws {
        let dir = try TemporaryDirectory()
        let host = try faultsHost(in: dir, ["IsolationFaults"], crashes: 1)
        defer { host.shutdown() }
        let file = dir.file("plugins/0-IsolationFaults.so")
        #expect(host.activePluginIDs == ["fixture.isolation-faults"])

        var meanwhile: String?, rival: PluginStatus?
        let outcome = host.reload("fixture.isolation-faults", from: file) { _ in
            let fault = host.registry.providers(of: Commands.self).first { $0.name == "fault" }
            for _ in 0..<2 { _ = try? fault?.run(arguments: ["segv"]) }
            meanwhile = host.records.first { $0.id == "fixture.isolation-faults" }?.code
            // With the id unclaimed, a discovery now admits another file of it.
            _ = try? dir.copy(Fixtures.library("IsolationFaults"), as: "plugins/1-rival.so")
            rival = (try? host.discover())?.first { $0.path.hasSuffix("1-rival.so") }?.status
        }
        #expect(rival == .available)
        // The old generation was quarantined while the reload was under way.
        #expect(meanwhile == "isolated-crash-loop")
        #expect(outcome.result == .reloaded, "\(String(describing: outcome.error))")
        let record = host.records.first { $0.id == "fixture.isolation-faults" }
        #expect(record?.status == .active)
        #expect(record?.generation == 2)
        #expect(host.activePluginIDs == ["fixture.isolation-faults"])
        let fault = try #require(host.registry.providers(of: Commands.self).first { $0.name == "fault" })
        #expect(try fault.run(arguments: ["echo", "new"]) == "new")

        // The file admitted meanwhile gave way to the new generation, and the
        // id is claimed again: the same plugin under another name is a duplicate.
        #expect(host.records.first { $0.path.hasSuffix("1-rival.so") }?.code == "duplicate-id")
        _ = try dir.copy(Fixtures.library("IsolationFaults"), as: "plugins/2-again.so")
        let again = try host.discover().first { $0.path.hasSuffix("2-again.so") }
        #expect(again?.code == "duplicate-id")
    }
}

extension ReloadAfterQuarantineTests {
    /// The same with plugins that build on it: the quarantine stops the one
    /// that requires it (in the work, at once), the reload then stops and
    /// starts again only the dependents still live (the optional one), and
    /// the stopped one stays stopped.
    @Test func aReloadAfterAQuarantineRestartsOnlyTheDependentsStillLive() throws {
        let dir = try TemporaryDirectory()
        let host = try faultsHost(in: dir, ["DepOnFaultsOptional", "DepOnFaults", "IsolationFaults"], crashes: 1)
        defer { host.shutdown() }
        #expect(host.activePluginIDs == ["fixture.isolation-faults", "fixture.dep.on-faults-optional", "fixture.dep.on-faults"])

        let outcome = host.reload("fixture.isolation-faults", from: dir.file("plugins/2-IsolationFaults.so")) { _ in
            let fault = host.registry.providers(of: Commands.self).first { $0.name == "fault" }
            for _ in 0..<2 { _ = try? fault?.run(arguments: ["segv"]) }
        }
        #expect(outcome.result == .reloaded, "\(String(describing: outcome.error))")
        #expect(outcome.dependents.map(\.pluginID) == ["fixture.dep.on-faults-optional"])
        let required = host.records.first { $0.id == "fixture.dep.on-faults" }
        #expect(required?.code == "dependency-quarantined")
        #expect(Set(host.activePluginIDs) == ["fixture.isolation-faults", "fixture.dep.on-faults-optional"])
        #expect(host.records.first { $0.id == "fixture.dep.on-faults-optional" }?.generation == 2)
    }
}
