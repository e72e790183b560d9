import Plugboard
import FixtureSupport
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: EchoPlugin<Beta>.self, id: "fixture.beta", version: "1.0.0", provides: [Commands.interface])
}
enum Beta: FixtureName { static let name = "beta" }
