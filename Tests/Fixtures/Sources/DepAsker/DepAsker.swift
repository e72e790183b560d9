import Plugboard

/// Requires two plugins optionally and says which it found, through
/// `PluginContext.hasPlugin` (the dependency tests).
final class DepAsker: Plugin {
    let found: String

    init(context: PluginContext) throws {
        found = "base:\(context.hasPlugin("fixture.dep.base")) absent:\(context.hasPlugin("fixture.dep.absent"))"
    }

    func contributions() -> [Contribution] { [.provider(Found(text: found), for: Commands.self)] }

    struct Found: Command {
        let text: String
        var name: String { "found" }
        var summary: String { "which optional dependencies are there" }
        func run(arguments: [String]) throws -> String { text }
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: DepAsker.self, id: "fixture.dep.asker", version: "1.0.0", provides: [Commands.interface],
        requires: [.plugin("fixture.dep.base", "1.0.0", optional: true), .plugin("fixture.dep.absent", "1.0.0", optional: true)])
}
