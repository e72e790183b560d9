import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepTop>.self, id: "fixture.dep.top", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.middle", "~1.0")])
}
enum DepTop: FixtureName { static let name = "top" }
