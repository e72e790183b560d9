import FixtureSupport
import Plugboard

// Requires fixture.dep.base; its second activation throws (the first restart of a cascade).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: Counter<DepFlaky>.self, id: "fixture.dep.flaky", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.base", "1.2.0")])
}
enum DepFlaky: CounterName {
    static let name = "flaky"
    static let failingActivation = 2
}
