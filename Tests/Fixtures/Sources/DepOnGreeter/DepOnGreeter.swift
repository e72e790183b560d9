import FixtureSupport
import Plugboard

// Requires the Greeter example: the dev-loop test's plugin that stops and
// starts again when `plugboard dev` reloads the greeter.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: Counter<DepOnGreeter>.self, id: "fixture.dep.on-greeter", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("dev.plugboard.example.greeter", "1.0.0")])
}
enum DepOnGreeter: CounterName { static let name = "on-greeter" }
