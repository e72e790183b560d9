import Plugboard

/// The plugin: created by the host, hands it one command.
final class Greeter: Plugin {
    init(context: PluginContext) throws {}

    func contributions() -> [Contribution] {
        [.provider(GreetCommand(), for: Commands.self)]
    }
}

/// `greet [NAME]` says hello.
struct GreetCommand: Command {
    let name = "greet"
    let summary = "Say hello"

    func run(arguments: [String]) throws -> String {
        "Hello, \(arguments.first ?? "world")!"
    }
}

/// The one symbol the host looks for.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: Greeter.self, id: "dev.plugboard.example.greeter", version: "1.0.0",
        provides: [Commands.interface])
}
