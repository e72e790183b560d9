import Plugboard
import SandboxAttackCommand

/// The hostile command again, in a plugin that declares sandbox needs (SDK
/// 2.3): TCP port 9 and reading /etc/passwd.
final class SandboxNeeds: Plugin {
    init(context: PluginContext) throws {}
    func activate() throws {}
    func deactivate() {}
    func contributions() -> [Contribution] { [.provider(Attack(), for: Commands.self)] }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: SandboxNeeds.self, id: "fixture.sandbox-needs", version: "1.0.0", provides: [Commands.interface],
        needs: [.tcpConnect(port: 9), .read("/etc/passwd")])
}
