import FixtureSupport
import Plugboard

// Requires fixture.dep.base from 1.2.0, keeps a count across restarts.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: Counter<DepCounter>.self, id: "fixture.dep.counter", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.base", "1.2.0")])
}
enum DepCounter: CounterName { static let name = "counter" }
