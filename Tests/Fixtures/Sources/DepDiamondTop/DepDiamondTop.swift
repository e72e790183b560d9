import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepDiamondTop>.self, id: "fixture.dep.diamond-top", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.diamond-left", "1.0.0"), .plugin("fixture.dep.diamond-right", "1.0.0")])
}
enum DepDiamondTop: FixtureName { static let name = "diamond-top" }
