import Plugboard
import FixtureSupport
// Same id as Alpha, lower version: rejected as duplicate-id.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: EchoPlugin<AlphaOld>.self, id: "fixture.alpha", version: "0.9.0", provides: [Commands.interface])
}
enum AlphaOld: FixtureName { static let name = "alpha-old" }
