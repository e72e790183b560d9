import FixtureSupport
import Plugboard

// fixture.dep.base, a patch release (1.2.1): every "1.2.0" range still accepts it.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: EchoPlugin<DepBasePatch>.self, id: "fixture.dep.base", version: "1.2.1", provides: [Commands.interface])
}
enum DepBasePatch: FixtureName { static let name = "base-patch" }
