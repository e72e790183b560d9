import Synchronization

/// The in-memory services a ``PluginHarness`` hands its plugin.
final class HarnessServices: Sendable {

    let log = Mutex<[PluginHarness.LogEntry]>([])
    let store: MemoryStore
    let events: MemoryEventBus
    let router: MemoryRouter
    let pluginID: String

    init(pluginID: String, storage: [String: [UInt8]]) {
        self.pluginID = pluginID
        store = MemoryStore(storage)
        events = MemoryEventBus()
        router = MemoryRouter()
    }

    /// Services for a fake required plugin beside the plugin under test:
    /// its own log and storage, `sharing`'s events and routes.
    init(pluginID: String, sharing: HarnessServices) {
        self.pluginID = pluginID
        store = MemoryStore([:])
        events = sharing.events
        router = sharing.router
    }

    func context(pluginID: String, declared: Set<String>, configuration: [String: ConfigValue]) -> PluginContext {
        context(pluginID: pluginID, declared: declared, configuration: configuration, activePlugins: [])
    }

    /// `activePlugins`: what ``PluginContext/hasPlugin(_:)`` says is there.
    func context(
        pluginID: String, declared: Set<String>, configuration: [String: ConfigValue], activePlugins: Set<String>
    ) -> PluginContext {
        let granted: [String: any Sendable] = [
            Services.Logging.id: MemoryLogger(label: pluginID, log: self),
            Services.Storage.id: store,
            Services.Configuration.id: MemoryConfiguration(values: configuration),
            Services.Events.id: events,
            Services.Router.id: router,
        ]
        var visible = granted.filter { declared.contains($0.key) }
        visible[PluginContext.activePluginsKey] = activePlugins
        return PluginContext(
            pluginID: pluginID, pluginVersion: SemanticVersion(0, 0), declaredServices: declared,
            granted: visible, denied: [:])
    }
}

struct MemoryLogger: PluginLogger {
    let label: String
    let log: HarnessServices
    func log(_ level: LogLevel, _ message: String) {
        log.log.withLock { $0.append(PluginHarness.LogEntry(level: level, message: message)) }
    }
}

struct MemoryConfiguration: PluginConfiguration {
    let values: [String: ConfigValue]
}

final class MemoryStore: KeyValueStore {
    let values: Mutex<[String: [UInt8]]>
    init(_ values: [String: [UInt8]]) { self.values = Mutex(values) }

    func value(for key: String) throws(ServiceError) -> [UInt8]? {
        try Self.check(key)
        return values.withLock { $0[key] }
    }

    func set(_ value: [UInt8], for key: String) throws(ServiceError) {
        try Self.check(key)
        values.withLock { $0[key] = value }
    }

    func removeValue(for key: String) throws(ServiceError) {
        try Self.check(key)
        _ = values.withLock { $0.removeValue(forKey: key) }
    }

    func keys() throws(ServiceError) -> [String] { values.withLock { $0.keys.sorted() } }

    /// The host's key rules, so a test fails where the host would.
    static func check(_ key: String) throws(ServiceError) {
        let length = key.utf8.count
        guard length > 0, length <= MemoryStore.maximumKeyLength else {
            throw ServiceError(.storageInvalidKey, "invalid storage key: keys are 1 to \(MemoryStore.maximumKeyLength) UTF-8 bytes, this one has \(length)")
        }
    }
}

final class MemoryEventBus: EventBus {
    let published = Mutex<[String]>([])
    private let subscribers = Mutex<[(name: String, handler: @Sendable (EventPayload) throws -> Void)]>([])

    func publish(_ event: EventPayload) -> EventDelivery {
        published.withLock { $0.append(event.name) }
        return deliver(event)
    }

    func deliver(_ event: EventPayload) -> EventDelivery {
        let targets = subscribers.withLock { $0.filter { $0.name == event.name } }
        var failures: [String] = []
        for target in targets {
            do { try target.handler(event) } catch { failures.append("\(error)") }
        }
        return EventDelivery(event: event.name, delivered: targets.count - failures.count, failures: failures, cycle: nil)
    }

    func subscribe(to name: String, _ handler: @escaping @Sendable (EventPayload) throws -> Void) -> EventSubscription {
        subscribers.withLock { $0.append((name, handler)) }
        return EventSubscription {}
    }
}

final class MemoryRouter: Router {
    let routes = Mutex<[(pattern: String, handler: @Sendable (RouteMatch) throws -> any Sendable)]>([])

    func register(_ pattern: String, _ handler: @escaping @Sendable (RouteMatch) throws -> any Sendable) throws(ServiceError) {
        try routes.withLock { routes throws(ServiceError) in
            guard !routes.contains(where: { $0.pattern == pattern }) else {
                throw ServiceError(.routeConflict, "route '\(pattern)' is already registered", path: pattern)
            }
            routes.append((pattern, handler))
        }
    }

    /// Literal segments and `{name}` captures, literal first, as the host matches.
    func navigate(to path: String) throws(ServiceError) -> any Sendable {
        let parts = path.split(separator: "/").map(String.init)
        let candidates = routes.withLock { $0 }.compactMap { route -> (RouteMatch, [Bool], @Sendable (RouteMatch) throws -> any Sendable)? in
            let segments = route.pattern.split(separator: "/").map(String.init)
            guard segments.count == parts.count else { return nil }
            var names: [String] = [], values: [String] = [], literal: [Bool] = []
            for (segment, part) in zip(segments, parts) {
                if segment.hasPrefix("{") {
                    names.append(String(segment.dropFirst().dropLast()))
                    values.append(part)
                    literal.append(false)
                } else if segment == part {
                    literal.append(true)
                } else {
                    return nil
                }
            }
            return (RouteMatch(path: path, pattern: route.pattern, parameterNames: names, parameterValues: values), literal, route.handler)
        }
        // The leftmost segment where two candidates differ decides: a literal wins.
        guard let best = candidates.min(by: { a, b in
            zip(a.1, b.1).first { $0 != $1 }.map { $0.0 } ?? false
        }) else {
            throw ServiceError(.routeNotFound, "no route handles '\(path)'", path: path)
        }
        do {
            return try best.2(best.0)
        } catch {
            throw ServiceError(.routeHandlerFailed, "the handler of '\(best.0.pattern)' failed for '\(path)': \(error)", path: path)
        }
    }
}
