import Plugboard
import FixtureSupport
final class WrongProvider: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [Contribution(interfaceID: Commands.interface.id, provider: "not a command")] }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: WrongProvider.self, id: "fixture.wrong-provider", version: "1.0.0", provides: [Commands.interface])
}
