import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepBase>.self, id: "fixture.dep.base", version: "1.2.0", provides: [Commands.interface],
        requires: [])
}
enum DepBase: FixtureName { static let name = "base" }
