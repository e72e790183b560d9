import Synchronization

/// Runs one plugin in a unit test, without a host: created through its
/// ``Plugin/init(context:)`` with in-memory services, activated, its
/// providers called, and what it logged, stored, published and routed
/// recorded for assertions.
///
/// ```swift
/// import Plugboard
/// import Testing
/// @testable import Hello
///
/// @Test func greets() throws {
///     let harness = try PluginHarness(Hello.self, id: "com.example.hello")
///     try harness.activate()
///     let greet = try #require(harness.providers(of: Commands.self).first)
///     #expect(try greet.run(arguments: ["Ada"]) == "Hello, Ada!")
///     #expect(harness.logged.map(\.message) == ["greeting [\"Ada\"]"])
/// }
/// ```
///
/// It lives in the SDK's own library, so a test process holds one copy of the
/// SDK, as a host does: casts of the plugin's providers work as they do there.
public final class PluginHarness: Sendable {
    /// One message the plugin logged.
    public struct LogEntry: Sendable, Equatable {
        /// Its severity.
        public let level: LogLevel
        /// The text logged.
        public let message: String

        /// An entry to compare with: `.init(level: .info, message: "ready")`.
        public init(level: LogLevel, message: String) {
            self.level = level
            self.message = message
        }
    }

    /// Every service the SDK defines: what a harness grants by default.
    public static var allServices: Set<String> {
        [Services.Logging.id, Services.Storage.id, Services.Configuration.id, Services.Events.id, Services.Router.id]
    }

    /// The plugin instance the harness created.
    public let plugin: any Plugin
    private let id: String
    private let services: HarnessServices

    /// Creates `type` with a context granting every service `services` names
    /// (all of them by default): configuration is the plugin's defaults with
    /// `configuration` merged in, storage starts as `storage`.
    public convenience init<P: Plugin>(
        _ type: P.Type, id: String = "test.plugin",
        services: Set<String> = PluginHarness.allServices,
        configuration: [String: ConfigValue] = [:], storage: [String: [UInt8]] = [:]
    ) throws {
        try self.init(type, id: id, services: services, configuration: configuration, storage: storage, requiring: [:])
    }

    /// Creates `type` as the other initializer does, after creating and
    /// activating a fake of each plugin it requires (see
    /// ``PluginRequirement``), by id: types the test writes, which get every
    /// service, and share the events and routes with the plugin under test.
    /// Its ``PluginContext/hasPlugin(_:)`` is true for each.
    ///
    /// ```swift
    /// struct FakeCheckout: Plugin {
    ///     init(context: PluginContext) throws {
    ///         try context.service(Services.Router.self).register("checkout/total") { _ in 42 }
    ///     }
    /// }
    /// let harness = try PluginHarness(Coupons.self, requiring: ["com.example.checkout": FakeCheckout.self])
    /// ```
    public init<P: Plugin>(
        _ type: P.Type, id: String = "test.plugin",
        services: Set<String> = PluginHarness.allServices,
        configuration: [String: ConfigValue] = [:], storage: [String: [UInt8]] = [:],
        requiring fakes: [String: any Plugin.Type]
    ) throws {
        self.id = id
        self.services = HarnessServices(pluginID: id, storage: storage)
        for (fakeID, fakeType) in fakes.sorted(by: { $0.key < $1.key }) {
            let fakeServices = HarnessServices(pluginID: fakeID, sharing: self.services)
            let fake = try fakeType.init(context: fakeServices.context(
                pluginID: fakeID, declared: PluginHarness.allServices, configuration: fakeType.defaultConfiguration))
            try fake.activate()
            // The shared bus keeps the fake (a harness adds no stored
            // property: its layout is the SDK's ABI), and stops it on demand.
            let box = FakeBox(fake)
            _ = self.services.events.subscribe(to: StopFake.name) { payload in
                if (try? payload.decode(StopFake.self))?.id == fakeID { box.stop() }
            }
        }
        var merged = P.defaultConfiguration
        for (key, value) in configuration { merged[key] = value }
        plugin = try P(context: self.services.context(
            pluginID: id, declared: services, configuration: merged, activePlugins: Set(fakes.keys)))
    }

    /// Stops the fake required plugin `id`: deactivates it and delivers
    /// ``PluginStopped`` to the plugin under test, as a host does when a
    /// plugin it optionally requires is quarantined.
    @discardableResult
    public func stopFake(_ id: String, code: String = "isolated-crash-loop") -> EventDelivery {
        _ = services.events.deliver(EventPayload(StopFake(id: id)))
        return publish(PluginStopped(pluginID: id, code: code, reason: "stopped by the test"))
    }

    /// Runs the plugin's ``Plugin/activate()``.
    public func activate() throws { try plugin.activate() }

    /// Runs the plugin's ``Plugin/deactivate()``.
    public func deactivate() { plugin.deactivate() }

    /// The providers the plugin contributes for `point`, as a host would cast them.
    public func providers<Point: ExtensionPoint>(of point: Point.Type) -> [Point.Provider] {
        plugin.contributions().filter { $0.interfaceID == Point.interface.id }.compactMap { $0.provider as? Point.Provider }
    }

    /// What the plugin logged, in order.
    public var logged: [LogEntry] { services.log.withLock { $0 } }

    /// What the plugin stored, by key.
    public var stored: [String: [UInt8]] { services.store.values.withLock { $0 } }

    /// The names of the events the plugin published, in order.
    public var published: [String] { services.events.published.withLock { $0 } }

    /// Delivers `event` to the plugin's subscriptions, as another plugin's publish would.
    @discardableResult
    public func publish<Event: PluginEvent>(_ event: Event) -> EventDelivery {
        services.events.deliver(EventPayload(event))
    }

    /// Follows a route the plugin registered.
    public func navigate(to path: String) throws(ServiceError) -> any Sendable {
        try services.router.navigate(to: path)
    }

    /// Answers `request` by a route the plugin registered with
    /// ``Router/serve(_:_:)``, as a host's server would. (SDK 2.3)
    public func respond(to request: RouteRequest) throws -> RouteResponse {
        try services.router.respond(to: request)
    }

    /// The route patterns the plugin registered.
    public var routes: [String] { services.router.routes.withLock { $0.map(\.pattern) } }

    /// A simulated hot reload: saves this plugin's state (``ReloadableState``),
    /// deactivates it, creates `newType` with the same services and stored
    /// data, restores the state into it before it activates, and returns the
    /// harness of the new generation.
    public func reload<New: Plugin>(as newType: New.Type) throws -> PluginHarness {
        let saved = try (plugin as? any ReloadableState).map { try $0.encodedState() }
        plugin.deactivate()
        let next = try PluginHarness(New.self, id: id, storage: stored)
        if let saved, let stateful = next.plugin as? any ReloadableState {
            try stateful.restore(encodedState: saved)
        }
        return next
    }
}

/// Tells one fake required plugin to stop (delivered on the shared bus only).
private struct StopFake: PluginEvent {
    static let name = "plugboard.harness.stop-fake"
    let id: String
}

/// A fake required plugin, deactivated at most once.
private final class FakeBox: Sendable {
    let plugin: Mutex<(any Plugin)?>
    init(_ plugin: any Plugin) { self.plugin = Mutex(plugin) }
    func stop() { plugin.withLock { $0.take() }?.deactivate() }
}
