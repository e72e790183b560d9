import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepOnRejected>.self, id: "fixture.dep.on-rejected", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.needs-newer", "1.0.0")])
}
enum DepOnRejected: FixtureName { static let name = "on-rejected" }
