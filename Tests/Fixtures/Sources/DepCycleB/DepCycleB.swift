import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepCycleB>.self, id: "fixture.dep.cycle-b", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.cycle-a", "1.0.0")])
}
enum DepCycleB: FixtureName { static let name = "cycle-b" }
