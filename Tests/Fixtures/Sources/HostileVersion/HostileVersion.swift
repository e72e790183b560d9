import FixtureSupport
import Plugboard

/// A plugin whose version is a placeholder (not a version: refused) that a
/// test patches with escape sequences, to see the refusal reach the terminal
/// escaped.
enum Name: FixtureName { static let name = "hostile-version" }

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<Name>.self, id: "fixture.hostile-version", version: "1.0.placeholder-version-field",
        provides: [Commands.interface])
}
