import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepBadRange>.self, id: "fixture.dep.bad-range", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.base", "latest")])
}
enum DepBadRange: FixtureName { static let name = "bad-range" }
