import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// A command that runs long on purpose: it tells the test (through the FIFO
/// named by PLUGBOARD_FIXTURE_FIFO), then waits until the process is stopped.
final class CommandLinger: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [.provider(Linger(), for: Commands.self)] }
    struct Linger: Command {
        var name: String { "linger" }
        var summary: String { "runs until stopped" }
        func run(arguments: [String]) throws -> String {
            signalTest("lingering\n")
            while true { sleep(1) }
        }
    }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: CommandLinger.self, id: "fixture.command-linger", version: "1.0.0", provides: [Commands.interface])
}
