import DeltaMarkC
import FixtureSupport
import Plugboard

// A good plugin (it passes every static check and loads) whose C constructor
// writes a marker file in $TMPDIR when the image is loaded anywhere: the refusal table
// proves with it that a refused file's code never ran.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    _ = plugboard_fixture_delta_mark  // keep the constructor's object linked
    return PluginExport.descriptor(for: EchoPlugin<Delta>.self, id: "fixture.delta", version: "1.0.0", provides: [Commands.interface])
}
enum Delta: FixtureName { static let name = "delta" }
