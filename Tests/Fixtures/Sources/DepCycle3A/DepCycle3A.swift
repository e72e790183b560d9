import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepCycle3A>.self, id: "fixture.dep.cycle3-a", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.cycle3-b", "1.0.0")])
}
enum DepCycle3A: FixtureName { static let name = "cycle3-a" }
