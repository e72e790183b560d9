import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

final class InitExit: Plugin {
    init(context: PluginContext) throws { exit(3) }
    func contributions() -> [Contribution] { [] }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: InitExit.self, id: "fixture.init-exit", version: "1.0.0", provides: [Commands.interface])
}
