import FixtureSupport
import Plugboard

// Starts only beside ParallelB when its settings give a rendezvous (the
// start-line tests).
enum ParallelA: GateName {
    static let name = "a"
    static let partner = "b"
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: GatedPlugin<ParallelA>.self, id: "fixture.parallel.a", version: "1.0.0", provides: [Commands.interface],
        services: [Services.Configuration.id])
}
