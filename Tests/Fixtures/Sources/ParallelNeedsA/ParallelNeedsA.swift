import FixtureSupport
import Plugboard

/// Requires ParallelA; its command says whether A was active when it was
/// created ("needs-a saw a").
final class ParallelNeedsA: Plugin {
    let saw: Bool
    init(context: PluginContext) throws { saw = context.hasPlugin("fixture.parallel.a") }
    func contributions() -> [Contribution] {
        [.provider(EchoCommand(name: saw ? "needs-a saw a" : "needs-a did not see a"), for: Commands.self)]
    }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: ParallelNeedsA.self, id: "fixture.parallel.needs-a", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.parallel.a", "~1.0")])
}
