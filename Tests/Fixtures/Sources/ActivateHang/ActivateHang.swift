import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// Says it started (a line into the FIFO named by PLUGBOARD_FIXTURE_FIFO, so
/// a test waits for the event, not a time), then never returns from activate.
final class ActivateHang: Plugin {
    init(context: PluginContext) throws {}
    func activate() throws {
        signalTest("activating\n")
        while true { sleep(1) }
    }
    func contributions() -> [Contribution] { [] }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: ActivateHang.self, id: "fixture.activate-hang", version: "1.0.0", provides: [Commands.interface])
}
