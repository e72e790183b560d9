import Plugboard
import FixtureSupport
// Built "against" Commands 1.1 while hosts offer 1.0: rejected.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<InterfaceNewer>.self, id: "fixture.interface-newer", version: "1.0.0",
        provides: [Interface(id: Commands.interface.id, version: SemanticVersion(1, 1))])
}
enum InterfaceNewer: FixtureName { static let name = "interface-newer" }
