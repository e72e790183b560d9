import FixtureSupport
import Plugboard
import ScanProbeC

/// A good plugin whose C constructor writes down what it sees in the process
/// that loads it and forks a child that never ends (see probe.c).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    plugboard_fixture_scan_probe()  // keeps the C half linked; runs once
    return PluginExport.descriptor(for: EchoPlugin<ScanProbe>.self, id: "fixture.scan-probe", version: "1.0.0", provides: [Commands.interface])
}
enum ScanProbe: FixtureName { static let name = "scan-probe" }
