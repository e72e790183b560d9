import Plugboard
import FixtureSupport
final class ActivateThrows: Plugin {
    init(context: PluginContext) throws {}
    func activate() throws { throw FixtureError(message: "activate refused on purpose") }
    func contributions() -> [Contribution] { [] }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: ActivateThrows.self, id: "fixture.activate-throws", version: "1.0.0", provides: [])
}
