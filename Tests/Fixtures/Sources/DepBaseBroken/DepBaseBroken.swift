import FixtureSupport
import Plugboard

// fixture.dep.base 1.2.2, whose activate throws: a reload to it rolls back.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: Counter<DepBaseBroken>.self, id: "fixture.dep.base", version: "1.2.2", provides: [Commands.interface])
}
enum DepBaseBroken: CounterName {
    static let name = "base-broken"
    static let failingActivation = 1
}
