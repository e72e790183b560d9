import Plugboard
import FixtureSupport
final class MissingProvider: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [] }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: MissingProvider.self, id: "fixture.missing-provider", version: "1.0.0", provides: [Commands.interface])
}
