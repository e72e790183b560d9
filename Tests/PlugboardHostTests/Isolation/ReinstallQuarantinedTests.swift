import Foundation
import Plugboard
@testable import PlugboardHost
@testable import PlugboardLifecycle
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Reinstalling the file of a quarantined plugin: the refresh says what
/// it found (kept quarantined, with why and the fix; or let out), never
/// "nothing to do".
@Suite struct ReinstallQuarantinedTests {
    let isolation = IsolationTests()

    /// Quarantined for its crashes, then the same bytes installed again
    /// (renamed into place, as `plugboard install` does: another file): the
    /// refresh examines it again and says so; it is available once more.
    @Test func aReinstalledQuarantinedPluginIsReportedLetOut() throws {
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir, budget: RestartBudget(crashes: 1))
        defer { host.shutdown() }
        for _ in 0..<2 { _ = isolation.code { try isolation.fault(host, "segv") } }
        #expect(host.records.first { $0.id == "fixture.isolation-faults" }?.status == .quarantined)
        try dir.copy(Fixtures.library("IsolationFaults"), as: "plugins/.incoming.so")
        #expect(rename(dir.file("plugins/.incoming.so"), dir.file("plugins/plugin.so")) == 0)
        let outcome = try host.refresh()
        #expect(outcome.changed.map { "\($0.record.id ?? "") \($0.previous) \($0.record.status)" } == ["fixture.isolation-faults quarantined available"])
        #expect(outcome.summary == "fixture.isolation-faults: quarantined -> available", "\(outcome.summary)")
        #expect(try isolation.fault(host, "echo", "back") == "back")
    }
}
