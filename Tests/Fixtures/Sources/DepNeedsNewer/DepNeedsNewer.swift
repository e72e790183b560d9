import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepNeedsNewer>.self, id: "fixture.dep.needs-newer", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.base", "1.3.0")])
}
enum DepNeedsNewer: FixtureName { static let name = "needs-newer" }
