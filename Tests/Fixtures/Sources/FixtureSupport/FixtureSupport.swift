// Shared by the fixtures (linked statically into each; no type crosses images).
import CPlugboard
import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Appends "<event> <name>" to the file named by PLUGBOARD_FIXTURE_LOG, if set.
/// Tests set it only on child processes, so in-process tests never write.
func logLifecycle(_ event: String, _ name: String) {
    guard let path = getenv("PLUGBOARD_FIXTURE_LOG") else { return }
    let file = fopen(path, "a")
    guard let file else { return }
    fputs("\(event) \(name)\n", file)
    fclose(file)
}

/// Names an ``EchoPlugin`` instance.
public protocol FixtureName { static var name: String { get } }

/// A well-behaved plugin: one command that echoes its name and arguments.
public final class EchoPlugin<Name: FixtureName>: Plugin {
    public init(context: PluginContext) throws { logLifecycle("init", Name.name) }
    public func activate() throws { logLifecycle("activate", Name.name) }
    public func deactivate() { logLifecycle("deactivate", Name.name) }
    public func contributions() -> [Contribution] {
        [.provider(EchoCommand(name: Name.name), for: Commands.self)]
    }
}

public struct EchoCommand: Command {
    public let name: String
    public init(name: String) { self.name = name }
    public var summary: String { "echo from \(name)" }
    public func run(arguments: [String]) throws -> String {
        ([name] + arguments).joined(separator: " ")
    }
}

public struct FixtureError: Error, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

enum Forged: FixtureName { static let name = "forged" }

/// A valid descriptor with one field changed by `change`.
public func forged(_ change: (inout plugboard_descriptor) -> Void) -> UnsafeRawPointer {
    let raw = PluginExport.descriptor(
        for: EchoPlugin<Forged>.self, id: "fixture.forged", version: "1.0.0", provides: [Commands.interface])
    let descriptor = UnsafeMutablePointer(mutating: raw.assumingMemoryBound(to: plugboard_descriptor.self))
    change(&descriptor.pointee)
    return raw
}

/// Claims `/shared/{id}` and `/<name>` in the router; a second claimer of
/// `/shared/{id}` must get a conflict (which it keeps, without failing).
/// Destinations are `[name, captured id]`: a standard type, so the tests can
/// read them without an interface package.
public final class RouteClaimer<Name: FixtureName>: Plugin {
    let router: any Router
    public init(context: PluginContext) throws { router = try context.service(Services.Router.self) }
    public func activate() throws {
        let name = Name.name
        try? router.register("/shared/{id}") { match in [name, match.parameters["id"] ?? ""] }
        try router.register("/\(name)") { _ in [name] }
    }
    public func contributions() -> [Contribution] { [] }
}

/// Tries every service and reports what it got, through a command named
/// after the fixture: `<name> probe`, `<name> put KEY VALUE`, `<name> get KEY`.
public final class ServiceProbe<Name: FixtureName>: Plugin {
    public static var defaultConfiguration: [String: ConfigValue] {
        ["limit": .int(10), "label": .string("default"), "ratio": .double(0.5)]
    }

    let context: PluginContext
    public init(context: PluginContext) throws { self.context = context }
    public func contributions() -> [Contribution] { [.provider(ProbeCommand(probe: self), for: Commands.self)] }

    func outcome<Key: Services.Key>(_ key: Key.Type) -> String {
        do {
            _ = try context.service(key)
            return "ok"
        } catch {
            return error.code.rawValue
        }
    }

    struct ProbeCommand: Command {
        let probe: ServiceProbe
        var name: String { Name.name }
        var summary: String { "probe services" }

        func run(arguments: [String]) throws -> String {
            let context = probe.context
            switch arguments.first {
            case "put":
                try context.service(Services.Storage.self).set(arguments[2], for: arguments[1])
                return "stored"
            case "get":
                return try context.service(Services.Storage.self).string(for: arguments[1]) ?? "<none>"
            case "config":
                let values = try context.service(Services.Configuration.self).values
                return values.keys.sorted().map { "\($0)=\(values[$0]!)" }.joined(separator: " ")
            default:
                return [
                    "logging=\(probe.outcome(Services.Logging.self))",
                    "storage=\(probe.outcome(Services.Storage.self))",
                    "configuration=\(probe.outcome(Services.Configuration.self))",
                    "events=\(probe.outcome(Services.Events.self))",
                ].joined(separator: " ")
            }
        }
    }
}

/// The services every probe declares (events deliberately left out).
public let probeServices = [Services.Logging.id, Services.Storage.id, Services.Configuration.id]

/// A plugin built in several versions under one id, for reload tests.
/// Its command `reloadable` answers "<version> call <n>", where n counts
/// calls since the host started (kept across reloads via ReloadableState).
public protocol ReloadVariant {
    static var version: String { get }
    static var failActivate: Bool { get }
    static var crashInInit: Bool { get }
}

extension ReloadVariant {
    public static var failActivate: Bool { false }
    public static var crashInInit: Bool { false }
}

public final class Reloadable<Variant: ReloadVariant>: Plugin, ReloadableState {
    let calls = Mutex(0)

    public init(context: PluginContext) throws {
        if Variant.crashInInit { fatalError("crashing on purpose while being created") }
    }

    public func activate() throws {
        if Variant.failActivate { throw FixtureError(message: "activate refused on purpose") }
    }

    public func contributions() -> [Contribution] { [.provider(ReloadableCommand(plugin: self), for: Commands.self)] }

    public struct State: Codable { public var calls: Int }
    public func saveState() -> State { State(calls: calls.withLock { $0 }) }
    public func restoreState(_ state: State) { calls.withLock { $0 = state.calls } }

    func call() -> String {
        let n = calls.withLock { value in
            value += 1
            return value
        }
        return "\(Variant.version) call \(n)"
    }

    struct ReloadableCommand: Command {
        let plugin: Reloadable
        var name: String { "reloadable" }
        var summary: String { "answers with its version" }
        func run(arguments: [String]) throws -> String { plugin.call() }
    }
}

/// Same id, a State of another shape: the old state cannot be decoded.
public final class ReshapedState: Plugin, ReloadableState {
    let label = Mutex("fresh")
    public init(context: PluginContext) throws {}
    public func contributions() -> [Contribution] { [.provider(Answer(plugin: self), for: Commands.self)] }
    public struct State: Codable { public var label: String }
    public func saveState() -> State { State(label: label.withLock { $0 }) }
    public func restoreState(_ state: State) { label.withLock { $0 = state.label } }

    struct Answer: Command {
        let plugin: ReshapedState
        var name: String { "reloadable" }
        var summary: String { "reshaped" }
        func run(arguments: [String]) throws -> String { "reshaped \(plugin.label.withLock { $0 })" }
    }
}

public func reloadableDescriptor<P: Plugin>(_ type: P.Type) -> UnsafeRawPointer {
    PluginExport.descriptor(for: type, id: "fixture.reloadable", version: "1.0.0", provides: [Commands.interface])
}

/// Writes `text` to stderr (fd 2) directly.
public func writeError(_ text: String) {
    _ = text.withCString { write(2, $0, strlen($0)) }
}

/// Writes `line` into the FIFO named by PLUGBOARD_FIXTURE_FIFO, if set: how a
/// fixture tells a test it reached the point to interrupt (an event, not a delay).
public func signalTest(_ line: String) {
    guard let fifo = getenv("PLUGBOARD_FIXTURE_FIFO") else { return }
    let fd = open(fifo, O_WRONLY)
    guard fd >= 0 else { return }
    _ = line.withCString { write(fd, $0, strlen($0)) }
    close(fd)
}

/// Asks whoever subscribes to store `value` under `key` (ServiceAccessTests).
public struct StoreRequest: PluginEvent {
    public static let name = "fixture.store"
    public let key: String
    public let value: String
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}
