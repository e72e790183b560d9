import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepCycleA>.self, id: "fixture.dep.cycle-a", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.cycle-b", "1.0.0")])
}
enum DepCycleA: FixtureName { static let name = "cycle-a" }
