import FixtureSupport
import Plugboard

/// A plugin whose descriptor and command carry placeholder strings (each
/// longer than 15 bytes, so it lies in the file as bytes): a test patches one
/// with escape sequences and newlines of the same length to see what the
/// terminal receives.
final class HostileStrings: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] {
        [.provider(EchoCommand(name: "placeholder-command-name"), for: Commands.self)]
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: HostileStrings.self, id: "fixture.placeholder-plugin-id", version: "1.0.0", provides: [Commands.interface],
        services: ["fixture.placeholder-service"], activation: [.event("fixture.placeholder-trigger")])
}
