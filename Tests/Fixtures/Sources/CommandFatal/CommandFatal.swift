import FixtureSupport
import Plugboard

final class CommandFatal: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [.provider(Boom(), for: Commands.self)] }
    struct Boom: Command {
        var name: String { "boom" }
        var summary: String { "crashes the process" }
        func run(arguments: [String]) throws -> String { fatalError("CommandFatal: crashing in a command on purpose") }
    }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: CommandFatal.self, id: "fixture.command-fatal", version: "1.0.0", provides: [Commands.interface])
}
