import Plugboard
import FixtureSupport

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: ServiceProbe<ProbeB>.self, id: "fixture.probe-b", version: "1.0.0", provides: [Commands.interface], services: probeServices)
}
enum ProbeB: FixtureName { static let name = "probe-b" }
