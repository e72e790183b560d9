import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

final class CommandFatal: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [.provider(Boom(), for: Commands.self), .provider(Vanish(), for: Commands.self)] }
    /// Ends the process with SIGKILL, which no handler sees: only the
    /// journal's note of the running call can tell who it was.
    struct Vanish: Command {
        var name: String { "vanish" }
        var summary: String { "kills the process with SIGKILL" }
        func run(arguments: [String]) throws -> String {
            kill(getpid(), SIGKILL)
            return "unreachable"
        }
    }
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
