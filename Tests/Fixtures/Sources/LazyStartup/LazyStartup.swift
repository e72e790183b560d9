import FixtureSupport
import Plugboard

enum Name: FixtureName { static let name = "startup" }
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<Name>.self, id: "fixture.startup", version: "1.0.0", provides: [Commands.interface],
        activation: [.startup])
}
