import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

// The parallel-start benchmark (plugboard-bench, ParallelStartBench.swift)
// copies this library 64 times and writes each copy's number over the
// "00000" of its id and of its point's id, so each copy is a plugin of its
// own providing a point of its own. Both ids stay literals of more than 15
// UTF-8 bytes (kept as bytes in .rodata, where they can be rewritten).
//
// Its init takes 20 ms (a sleep: a plugin opening a database or a socket):
// 64 started one after another take 1.3 s, side by side about 20 ms.
final class BenchSlowStart: Plugin {
    init(context: PluginContext) throws { usleep(20_000) }
    func contributions() -> [Contribution] {
        [Contribution(interfaceID: "bench.slow.point.number.00000", provider: EchoCommand(name: "slow") as any Command)]
    }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: BenchSlowStart.self, id: "bench.slow.plugin.number.00000", version: "1.0.0",
        provides: [Interface(id: "bench.slow.point.number.00000", version: SemanticVersion(1, 0))])
}
