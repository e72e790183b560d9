import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepCycle3C>.self, id: "fixture.dep.cycle3-c", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.cycle3-a", "1.0.0")])
}
enum DepCycle3C: FixtureName { static let name = "cycle3-c" }
