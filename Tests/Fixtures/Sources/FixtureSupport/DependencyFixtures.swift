import Plugboard
import Synchronization

/// Names a ``Counter``, and which of its activations in this process (in
/// this image: a reload cascade starts a dependent again from the image it
/// ran) throws, if one does.
public protocol CounterName: FixtureName { static var failingActivation: Int { get } }

extension CounterName {
    public static var failingActivation: Int { 0 }
}

/// Activations per counter name in this process.
private let activations = Mutex<[String: Int]>([:])

/// A dependent with state: its command `<name>` counts its calls, and the
/// count is handed over when it is stopped and started again
/// (ReloadableState). Answers "<name> <count>".
public final class Counter<Name: CounterName>: Plugin, ReloadableState {
    let count = Mutex(0)

    public init(context: PluginContext) throws {}

    public func activate() throws {
        let number = activations.withLock { counts in
            counts[Name.name, default: 0] += 1
            return counts[Name.name]!
        }
        if number == Name.failingActivation {
            throw FixtureError(message: "\(Name.name) fails its activation number \(number) on purpose")
        }
    }

    public func contributions() -> [Contribution] { [.provider(CounterCommand(plugin: self), for: Commands.self)] }

    public struct State: Codable { public var count: Int }
    public func saveState() -> State { State(count: count.withLock { $0 }) }
    public func restoreState(_ state: State) { count.withLock { $0 = state.count } }

    struct CounterCommand: Command {
        let plugin: Counter
        var name: String { Name.name }
        var summary: String { "counts its calls" }
        func run(arguments: [String]) throws -> String {
            "\(Name.name) \(plugin.count.withLock { count in count += 1; return count })"
        }
    }
}

/// A plugin that optionally requires another and listens for it to stop:
/// its command `<name>` answers what it heard ("fixture.x isolated-crash-loop"),
/// or "nothing".
public final class StopListener<Name: FixtureName>: Plugin {
    let heard = HeardStops()

    public init(context: PluginContext) throws {
        heard.listen(try context.service(Services.Events.self))
    }

    public func contributions() -> [Contribution] { [.provider(ListenerCommand(plugin: self), for: Commands.self)] }

    struct ListenerCommand: Command {
        let plugin: StopListener
        var name: String { Name.name }
        var summary: String { "what it heard stop" }
        func run(arguments: [String]) throws -> String {
            let heard = plugin.heard.list.withLock { $0 }
            return heard.isEmpty ? "nothing" : heard.joined(separator: ", ")
        }
    }
}

/// What a ``StopListener`` heard (not generic: its handler captures no metatype).
final class HeardStops: Sendable {
    let list = Mutex<[String]>([])

    func listen(_ events: any EventBus) {
        events.subscribe(PluginStopped.self) { [self] stopped in
            list.withLock { $0.append("\(stopped.pluginID) \(stopped.code)") }
        }
    }
}
