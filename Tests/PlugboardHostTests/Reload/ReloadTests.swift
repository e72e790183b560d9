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

/// The library's reload API on real builds of one plugin id.
@Suite struct ReloadTests {
    /// A host running ReloadV1, and the folder of its images and cache; the
    /// caller shuts the host down and keeps the folder.
    func host() throws -> (PluginHost, TemporaryDirectory) {
        let dir = try TemporaryDirectory()
        let first = try Fixtures.library("ReloadV1").path
        let host = PluginHost(configuration: .with(imagesDirectory: dir.file("generations"), cacheDirectory: dir.file("cache")))
        host.declareDemoExtensionPoints()
        let record = host.load(reloadable: first)
        #expect(record.status == .active)
        return (host, dir)
    }

    func call(_ host: PluginHost) throws -> String {
        try #require(host.registry.provider(of: Commands.self) { $0.name == "reloadable" }).run(arguments: [])
    }

    @Test func aReloadSwitchesToTheNewCodeAndHandsOverState() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        #expect(try call(host) == "v1 call 1")
        let outcome = host.reload("fixture.reloadable", from: try Fixtures.library("ReloadV2").path)
        #expect(outcome.result == .reloaded)
        #expect(outcome.generation == 2)
        #expect(outcome.stateNote == "state handed over")
        #expect(outcome.addedMemory > 0)
        // Where verify went: each part measured, none more than the whole.
        let timings = outcome.timings
        #expect(timings.verifyAdmission > 0 && timings.verifyInScanner > 0 && timings.verifyWait >= 0, "\(timings)")
        #expect(timings.verifyAdmission + timings.verifyWait + timings.verifyInScanner <= timings.verify, "\(timings)")
        #expect(try call(host) == "v2 call 2")
        #expect(host.records.first { $0.id == "fixture.reloadable" }?.generation == 2)
        #expect(host.registry.registrations(for: Commands.interface.id).map(\.generation) == [2])
    }

    @Test func aNewGenerationThatThrowsIsRolledBackWithTheOldStateIntact() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        #expect(try call(host) == "v1 call 1")
        let outcome = host.reload("fixture.reloadable", from: try Fixtures.library("ReloadFailActivate").path)
        #expect(outcome.result == .rolledBack(.activateFailed(
            path: try Fixtures.library("ReloadFailActivate").path, id: "fixture.reloadable", error: "activate refused on purpose")))
        #expect(outcome.generation == 1)
        #expect(try call(host) == "v1 call 2")
    }

    @Test func aRejectedBuildKeepsTheOldGeneration() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let other = host.reload("fixture.reloadable", from: try Fixtures.library("Alpha").path)
        #expect(other.error?.code == "reload-id-mismatch")
        let broken = try dir.write(Data("garbage".utf8), as: "broken.so")
        #expect(host.reload("fixture.reloadable", from: broken).error?.code == "not-elf")
        #expect(host.reload("fixture.missing", from: broken).error?.code == "not-loaded")
        #expect(try call(host) == "v1 call 1")
    }

    @Test func aNewStateShapeStartsFreshAndSaysSo() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let outcome = host.reload("fixture.reloadable", from: try Fixtures.library("ReloadReshaped").path)
        #expect(outcome.result == .reloaded)
        #expect(outcome.stateNote?.hasPrefix("state not restored: the new code cannot decode the old state") == true)
        #expect(try call(host) == "reshaped fresh")
    }

    @Test func withoutAVerifierANewBuildIsScannedBeforeItRunsInTheHost() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let outcome = host.reload("fixture.reloadable", from: try Fixtures.library("EntryAbort").path)
        #expect(outcome.error?.code == "verify-crashed")
        #expect(outcome.error?.reason.contains("SIGABRT in phase entry") == true, "\(outcome.error?.reason ?? "")")
        #expect(try call(host) == "v1 call 1")
    }

    @Test func aBuildThatCrashesInInitIsCaughtInAScannerAndTheHostLivesOn() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let outcome = host.reload("fixture.reloadable", from: try Fixtures.library("ReloadCrash").path, verification: .loadAndActivate)
        #expect(outcome.error?.code == "verify-crashed")
        #expect(outcome.error?.reason.contains("crashed with SIG") == true, "\(outcome.error?.reason ?? "")")
        // The fixture's init calls fatalError: the scanner names the phase.
        #expect(outcome.error?.reason.contains("in phase init") == true, "names the phase: \(outcome.error?.reason ?? "")")
        #expect(try call(host) == "v1 call 1")
        // A good build still reloads after that.
        let good = host.reload("fixture.reloadable", from: try Fixtures.library("ReloadV2").path, verification: .loadAndActivate)
        #expect(good.result == .reloaded)
        #expect(try call(host) == "v2 call 2")
    }
}
