import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// Plugin A of the crash-attribution scenario: `activate()` starts a thread
/// of its own that segfaults later, while another plugin's command runs.
/// With PLUGBOARD_FIXTURE_FAULT_AFTER (a path), the thread faults once that
/// file exists (an event); without it, 200 ms after activation.
final class ThreadFault: Plugin {
    init(context: PluginContext) throws {}
    func activate() throws {
        var thread = pthread_t()
        _ = pthread_create(&thread, nil, { _ in
            if let marker = getenv("PLUGBOARD_FIXTURE_FAULT_AFTER") {
                for _ in 0..<30_000 where access(marker, F_OK) != 0 { usleep(1000) }
            } else {
                usleep(200_000)
            }
            faultHere()
            return nil
        }, nil)
        pthread_detach(thread)
    }
    func contributions() -> [Contribution] { [.provider(EchoCommand(name: "thread-fault"), for: Commands.self)] }
}

/// A write through a bad pointer, in this image's code.
@inline(never)
func faultHere() {
    let address = UnsafeMutablePointer<Int>(bitPattern: Int(getpid() > 0 ? 16 : 32))!
    address.pointee = 1
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: ThreadFault.self, id: "fixture.thread-fault", version: "1.0.0", provides: [Commands.interface])
}
