import Plugboard
import Synchronization

/// The simplest example: one command, using the logging, storage and
/// configuration services, and keeping its state across hot reloads.
final class Greeter: Plugin, ReloadableState {
    static let defaultConfiguration: [String: ConfigValue] = ["greeting": .string("Hello")]

    private let log: any PluginLogger
    private let storage: any KeyValueStore
    private let greeting: String
    /// Greetings since the host started: kept across hot reloads.
    private let session = Mutex(0)

    init(context: PluginContext) throws {
        log = try context.service(Services.Logging.self)
        storage = try context.service(Services.Storage.self)
        greeting = try context.service(Services.Configuration.self).string("greeting") ?? "Hello"
    }

    func activate() throws { log.debug("greeter ready") }

    func contributions() -> [Contribution] {
        [.provider(GreetCommand(greeter: self), for: Commands.self)]
    }

    /// Says hello; counts greetings in this session and, in storage, forever.
    func greet(_ name: String) throws -> String {
        let total = (Int(try storage.string(for: "greetings") ?? "") ?? 0) + 1
        try storage.set(String(total), for: "greetings")
        let count = session.withLock { count in
            count += 1
            return count
        }
        return "\(greeting), \(name)! (greeting \(count) this session, \(total) in all)"
    }

    // MARK: ReloadableState

    struct State: Codable { var session: Int }
    func saveState() -> State { State(session: session.withLock { $0 }) }
    func restoreState(_ state: State) { session.withLock { $0 = state.session } }
}

/// `greet [NAME]`
struct GreetCommand: Command {
    let greeter: Greeter
    let name = "greet"
    let summary = "Say hello (counts greetings in storage)"

    func run(arguments: [String]) throws -> String {
        try greeter.greet(arguments.first ?? "world")
    }
}

/// The one symbol the host looks for.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: Greeter.self, id: "dev.plugboard.example.greeter", version: "1.1.0",
        provides: [Commands.interface],
        services: [Services.Logging.id, Services.Storage.id, Services.Configuration.id],
        // `plugboard run greet` activates this plugin alone, not every plugin with commands.
        activation: [.command("greet")])
}
