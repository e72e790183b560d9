import Plugboard
import FixtureSupport
// The startup benchmark (plugboard-bench, StartupBench.swift) copies this
// library up to 200 times and writes each copy's number over the "00000" of
// the id, so every copy has an id of its own. The id must stay one literal of
// more than 15 UTF-8 bytes: Swift keeps those as bytes in .rodata, where they
// can be found and rewritten; shorter ones are packed into the String itself.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: EchoPlugin<Bench>.self, id: "bench.plugin.number.00000", version: "1.0.0", provides: [Commands.interface],
                              activation: [.command(Bench.name)])
}
enum Bench: FixtureName { static let name = "bench" }
