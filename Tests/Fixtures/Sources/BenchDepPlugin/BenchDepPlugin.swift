import Plugboard
import FixtureSupport
// The dependency benchmark (plugboard-bench, DependencyBench.swift) copies
// this library up to 200 times, writes each copy's number over the "00000"
// of the id and the numbers of three other copies over "9999a", "9999b" and
// "9999c": every copy requires three others. Each literal must stay longer
// than 15 UTF-8 bytes (kept as bytes in .rodata, where they can be rewritten).
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: EchoPlugin<BenchDep>.self, id: "bench.plugin.number.00000", version: "1.0.0", provides: [Commands.interface],
        requires: [
            .plugin("bench.plugin.number.9999a", "1.0.0"),
            .plugin("bench.plugin.number.9999b", "1.0.0"),
            .plugin("bench.plugin.number.9999c", "1.0.0"),
        ])
}
enum BenchDep: FixtureName { static let name = "bench" }
