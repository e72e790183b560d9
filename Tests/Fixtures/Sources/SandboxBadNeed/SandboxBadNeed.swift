import Plugboard
import SandboxAttackCommand

/// A plugin whose declared need no SDK helper writes (a relative path).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: AttackPlugin.self, id: "fixture.sandbox-bad-need", version: "1.0.0", provides: [Commands.interface],
        needs: [.read("relative/path")])
}
