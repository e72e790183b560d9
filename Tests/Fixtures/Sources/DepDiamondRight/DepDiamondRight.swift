import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepDiamondRight>.self, id: "fixture.dep.diamond-right", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.base", "~1.2")])
}
enum DepDiamondRight: FixtureName { static let name = "diamond-right" }
