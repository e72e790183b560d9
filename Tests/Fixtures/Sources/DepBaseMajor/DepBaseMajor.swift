import FixtureSupport
import Plugboard

// fixture.dep.base, a major release (2.0.0): a "1.2.0" range no longer accepts it.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: EchoPlugin<DepBaseMajor>.self, id: "fixture.dep.base", version: "2.0.0", provides: [Commands.interface])
}
enum DepBaseMajor: FixtureName { static let name = "base-major" }
