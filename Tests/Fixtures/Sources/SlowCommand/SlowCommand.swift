import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// Plugin B of the crash-attribution scenario: an innocent 1.5 s command.
/// It creates the file named by PLUGBOARD_FIXTURE_FAULT_AFTER as it starts
/// (the event plugin A's thread waits for).
final class SlowCommand: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [.provider(Slow(), for: Commands.self)] }
    struct Slow: Command {
        var name: String { "slow" }
        var summary: String { "takes 1.5 s" }
        func run(arguments: [String]) throws -> String {
            if let marker = getenv("PLUGBOARD_FIXTURE_FAULT_AFTER") {
                let fd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
                if fd >= 0 { close(fd) }
            }
            usleep(1_500_000)
            return "slow done"
        }
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: SlowCommand.self, id: "fixture.slow-command", version: "1.0.0", provides: [Commands.interface])
}
