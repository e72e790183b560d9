import FixtureSupport
import Plugboard

// Starts only beside ParallelA when its settings give a rendezvous.
enum ParallelB: GateName {
    static let name = "b"
    static let partner = "a"
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: GatedPlugin<ParallelB>.self, id: "fixture.parallel.b", version: "1.0.0", provides: [Commands.interface],
        services: [Services.Configuration.id])
}
