import Plugboard
import FixtureSupport
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: EchoPlugin<InvalidID>.self, id: "not reverse dns", version: "1.0.0", provides: [Commands.interface])
}
enum InvalidID: FixtureName { static let name = "invalid-id" }
