import FixtureSupport
import Plugboard

final class InitFatal: Plugin {
    init(context: PluginContext) throws { fatalError("InitFatal: crashing in init on purpose") }
    func contributions() -> [Contribution] { [] }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: InitFatal.self, id: "fixture.init-fatal", version: "1.0.0", provides: [Commands.interface])
}
