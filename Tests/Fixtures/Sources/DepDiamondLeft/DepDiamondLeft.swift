import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepDiamondLeft>.self, id: "fixture.dep.diamond-left", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.base", "1.0.0")])
}
enum DepDiamondLeft: FixtureName { static let name = "diamond-left" }
