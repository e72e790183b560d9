import FixtureSupport
import Plugboard

// Optionally requires fixture.isolation-faults, and listens for it to stop.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: StopListener<DepOnFaultsOptional>.self, id: "fixture.dep.on-faults-optional", version: "1.0.0",
        provides: [Commands.interface], services: [Services.Events.id],
        requires: [.plugin("fixture.isolation-faults", "1.0.0", optional: true)])
}
enum DepOnFaultsOptional: FixtureName { static let name = "on-faults-optional" }
