import Plugboard
import FixtureSupport
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: EchoPlugin<Alpha>.self, id: "fixture.alpha", version: "1.0.0", provides: [Commands.interface])
}
enum Alpha: FixtureName { static let name = "alpha" }
