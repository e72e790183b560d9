import Plugboard
import FixtureSupport
// Provides an interface no host declares, beside Commands: active, with a warning.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<Undeclared>.self, id: "fixture.undeclared", version: "1.0.0",
        provides: [Commands.interface, Interface(id: "fixture.unknown", version: SemanticVersion(1, 0))])
}
enum Undeclared: FixtureName { static let name = "undeclared" }
