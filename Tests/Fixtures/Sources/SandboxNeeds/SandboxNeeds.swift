import Plugboard
import SandboxAttackCommand

/// The hostile command again, in a plugin that declares sandbox needs (SDK
/// 2.3): TCP port 9 and reading /etc/passwd.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: AttackPlugin.self, id: "fixture.sandbox-needs", version: "1.0.0", provides: [Commands.interface],
        needs: [.tcpConnect(port: 9), .read("/etc/passwd")])
}
