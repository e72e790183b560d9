import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// Plugin A of the crash-attribution scenario: `activate()` starts a thread
/// of its own that segfaults while another plugin's command runs. The
/// thread waits on the FIFO named by PLUGBOARD_FIXTURE_FAULT_AFTER (made by
/// the test) until that command writes to it: an event, not a delay.
/// Without the variable the thread does nothing.
final class ThreadFault: Plugin {
    init(context: PluginContext) throws {}
    func activate() throws {
        guard getenv("PLUGBOARD_FIXTURE_FAULT_AFTER") != nil else { return }
        var thread = pthread_t()
        _ = pthread_create(&thread, nil, { _ in
            guard let fifo = getenv("PLUGBOARD_FIXTURE_FAULT_AFTER") else { return nil }
            // Blocks until the command opens the FIFO and writes its byte.
            let fd = open(fifo, O_RDONLY | O_CLOEXEC)
            var byte: UInt8 = 0
            if fd >= 0 { _ = read(fd, &byte, 1) }
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
