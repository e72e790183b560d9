import Testing
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle

/// A bad input that must stay cheap: one cycle through thousands of
/// plugins is found once, and its text grows with its length (a set of
/// 3,000 such plugins once gave 182 MiB of `list --json`, each member
/// repeating the whole cycle).
@Suite struct LongCycleTests {
    func plugin(_ index: Int, count: Int) -> ScannedPlugin {
        ScannedPlugin(
            id: "cycle.\(index)", version: "1.0.0", provides: [], services: [], sdkABI: "2.2", sdkVersion: "2.2.0",
            toolchain: "t", activation: [],
            requires: [PluginDependency(id: "cycle.\((index + 1) % count)", range: "^1.0.0")])
    }

    @Test func aCycleOfThreeThousandIsFoundOnceAndReportedInLinearText() {
        let count = 3_000
        let cycles = Catalog.cycles(in: (0..<count).map { plugin($0, count: count) })
        #expect(cycles.count == 1)
        let cycle = cycles[0]
        #expect(cycle.count == count)
        let reasons = cycle.map { Catalog.cycleReason(cycle, member: $0) }
        // The first member shows it whole; every other one names it by reference.
        #expect(reasons[0].contains("cycle.0 → cycle.1 → cycle.2 → cycle.3"))
        #expect(reasons.dropFirst().allSatisfy { $0.contains("a cycle of 3000 required plugins, shown whole on cycle.0") })
        let bytes = reasons.reduce(0) { $0 + $1.utf8.count }
        // Linear: the whole cycle once (about 10 bytes a member), then a fixed text each.
        #expect(bytes < count * 300, "\(bytes) bytes of reasons")
    }

    @Test func aShortCycleIsShownWholeOnEveryMember() {
        let cycle = (0..<Catalog.cycleShownWhole).map { "c.\($0)" }
        for member in cycle {
            #expect(Catalog.cycleReason(cycle, member: member).contains("c.0 → c.1 → c.2 → c.3 → c.4 → c.5 → c.6 → c.7 → c.0"))
        }
    }
}
