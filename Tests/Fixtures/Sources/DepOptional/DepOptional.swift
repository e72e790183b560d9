import FixtureSupport
import Plugboard

// A plugin that builds on others (the dependency tests).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepOptional>.self, id: "fixture.dep.optional", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.absent", "1.0.0", optional: true), .plugin("fixture.dep.base", ">=1.0.0 <2.0.0")])
}
enum DepOptional: FixtureName { static let name = "optional" }
