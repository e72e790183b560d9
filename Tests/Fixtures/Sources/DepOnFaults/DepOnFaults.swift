import FixtureSupport
import Plugboard

// Requires the isolated fixture.isolation-faults.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<DepOnFaults>.self, id: "fixture.dep.on-faults", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.isolation-faults", "1.0.0")])
}
enum DepOnFaults: FixtureName { static let name = "on-faults" }
