import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepMissing>.self, id: "fixture.dep.missing", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.nowhere", "=1.0.0")])
}
enum DepMissing: FixtureName { static let name = "missing" }
