import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepMiddle>.self, id: "fixture.dep.middle", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.base", "1.0.0")])
}
enum DepMiddle: FixtureName { static let name = "middle" }
