import Plugboard
import FixtureSupport

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: ServiceProbe<ProbeA>.self, id: "fixture.probe-a", version: "1.0.0", provides: [Commands.interface], services: probeServices)
}
enum ProbeA: FixtureName { static let name = "probe-a" }
