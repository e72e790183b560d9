import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepCycle3B>.self, id: "fixture.dep.cycle3-b", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.cycle3-c", "1.0.0")])
}
enum DepCycle3B: FixtureName { static let name = "cycle3-b" }
