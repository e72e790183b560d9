import Plugboard
import FixtureSupport

// A third good plugin: tests patch copies of it (architecture, toolchain).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: EchoPlugin<Gamma>.self, id: "fixture.gamma", version: "1.0.0", provides: [Commands.interface])
}
enum Gamma: FixtureName { static let name = "gamma" }
