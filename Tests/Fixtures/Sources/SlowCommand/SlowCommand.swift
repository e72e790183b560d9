import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// Plugin B of the crash-attribution scenario: an innocent command that
/// runs until the process ends. As it starts it writes a byte into the FIFO
/// named by PLUGBOARD_FIXTURE_FAULT_AFTER (the event plugin A's thread waits
/// for), then waits on a pipe nobody writes: the fault ends the process
/// first. Its 60 s bound only stops a run where nothing faulted.
final class SlowCommand: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [.provider(Slow(), for: Commands.self)] }
    struct Slow: Command {
        var name: String { "slow" }
        var summary: String { "runs until the process ends" }
        func run(arguments: [String]) throws -> String {
            if let fifo = getenv("PLUGBOARD_FIXTURE_FAULT_AFTER") {
                let fd = open(fifo, O_WRONLY | O_CLOEXEC)
                if fd >= 0 {
                    var byte: UInt8 = 1
                    _ = write(fd, &byte, 1)
                    close(fd)
                }
            }
            var never: [Int32] = [-1, -1]
            guard pipe(&never) == 0 else { return "slow done" }
            var waiting = pollfd(fd: never[0], events: Int16(POLLIN), revents: 0)
            _ = poll(&waiting, 1, 60_000)
            close(never[0])
            close(never[1])
            return "slow done"
        }
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: SlowCommand.self, id: "fixture.slow-command", version: "1.0.0", provides: [Commands.interface])
}
