import CtorAbortC
import FixtureSupport
import Plugboard

enum Name: FixtureName { static let name = "ctor-abort" }
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    _ = plugboard_fixture_ctor_abort_linked()
    return PluginExport.descriptor(for: EchoPlugin<Name>.self, id: "fixture.ctor-abort", version: "1.0.0", provides: [Commands.interface])
}
