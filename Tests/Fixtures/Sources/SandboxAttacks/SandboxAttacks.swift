import Plugboard
import SandboxAttackCommand

/// A hostile plugin for the sandbox tests (see ``Attack``), declaring no
/// sandbox needs.
final class SandboxAttacks: Plugin {
    init(context: PluginContext) throws {}
    func activate() throws {}
    func deactivate() {}
    func contributions() -> [Contribution] { [.provider(Attack(), for: Commands.self)] }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: SandboxAttacks.self, id: "fixture.sandbox-attacks", version: "1.0.0", provides: [Commands.interface])
}
