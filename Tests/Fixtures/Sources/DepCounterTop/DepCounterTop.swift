import FixtureSupport
import Plugboard

// Requires fixture.dep.counter: stops and starts again when the base is reloaded.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: Counter<DepCounterTop>.self, id: "fixture.dep.counter-top", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.counter", "1.0.0")])
}
enum DepCounterTop: CounterName { static let name = "counter-top" }
