import Plugboard
import FixtureSupport
final class InitThrows: Plugin {
    init(context: PluginContext) throws { throw FixtureError(message: "init refused on purpose") }
    func contributions() -> [Contribution] { [] }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: InitThrows.self, id: "fixture.init-throws", version: "1.0.0", provides: [])
}
