import Plugboard
import FixtureSupport
// Declares the command `other` but provides `told`: `plugboard run told`
// skips it while it is not active, and says so once it is.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<MisdeclaredCommand>.self, id: "fixture.misdeclared-command", version: "1.0.0",
        provides: [Commands.interface], activation: [.command("other")])
}
enum MisdeclaredCommand: FixtureName { static let name = "told" }
