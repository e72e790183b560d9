import Plugboard
import SandboxAttackCommand

/// A hostile plugin for the sandbox tests (see ``Attack``), declaring no
/// sandbox needs.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: AttackPlugin.self, id: "fixture.sandbox-attacks", version: "1.0.0", provides: [Commands.interface])
}
