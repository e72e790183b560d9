@_spi(PlugboardHost) import Plugboard
import Synchronization
import PlugboardCore
import PlugboardAdmission
import PlugboardRegistry

/// The services one host offers its plugins, and the per-plugin views of them
/// that go into each ``PluginContext``. Also collects the host's diagnostics.
package final class HostServices: Sendable {
    package let events: EventHub
    /// The host's own bus (`PluginHost.events`), made once.
    package let hostEvents: any EventBus
    package let routes: RouteTable
    /// Event and route triggers of plugins not yet active.
    package let triggers: ActivationTriggers
    /// The plugins being started: what they ask through their context starts nothing.
    package let starting = StartingPlugins()
    package let logSink: LogSink
    package let dataDirectory: String?
    let storageQuota: StorageQuota
    package let configuration: HostSettings
    private let custom = Mutex<[String: @Sendable (String) -> any Sendable]>([:])
    /// The event bus a plugin gets (nil: the host's own, `PluginEventBus` in
    /// its `directEventBus()`); an isolated plugin's child gives one that
    /// crosses to the host.
    private let makeEventBus: (@Sendable (EventHub, ServiceOwner) -> any EventBus)?
    /// The store a plugin gets around its folder's (nil: that one); a
    /// sandboxed child's sends its writes to the host.
    private let makeStore: (@Sendable (FileKeyValueStore) -> any KeyValueStore)?
    /// The router a plugin gets (nil: the host's table); an isolated
    /// plugin's child gives one that registers in the host's.
    private let makeRouter: (@Sendable (ServiceOwner) -> any Router)?
    private var diagnostics: DiagnosticLog { diagnosticLog }
    /// Reaches the lifecycle for ``Services/Extensions`` (nil in an isolated child).
    private let activator: (any PluginActivating)?

    package init(
        configuration: HostSettings, dataDirectory: String?, logSink: LogSink, storageQuota: StorageQuota = StorageQuota(),
        diagnostics: DiagnosticLog = DiagnosticLog(), activator: (any PluginActivating)? = nil,
        makeEventBus: (@Sendable (EventHub, ServiceOwner) -> any EventBus)? = nil,
        makeStore: (@Sendable (FileKeyValueStore) -> any KeyValueStore)? = nil,
        makeRouter: (@Sendable (ServiceOwner) -> any Router)? = nil
    ) {
        self.makeRouter = makeRouter
        self.makeEventBus = makeEventBus
        self.makeStore = makeStore
        self.activator = activator
        self.storageQuota = storageQuota
        let triggers = ActivationTriggers(activator: activator, starting: starting)
        self.triggers = triggers
        for diagnostic in configuration.diagnostics { diagnostics.append(diagnostic) }
        self.diagnosticLog = diagnostics
        self.configuration = configuration
        self.dataDirectory = dataDirectory.map(PluginDirectory.absolutePath)
        self.logSink = logSink
        let events = EventHub(report: diagnostics.append, triggers: triggers)
        self.events = events
        hostEvents = PluginEventBus(hub: events, owner: .host).directEventBus()
        self.routes = RouteTable(triggers: triggers)
    }

    package func report(_ diagnostic: HostDiagnostic) { diagnostics.append(diagnostic) }

    /// Plugin `id`'s storage: the plugin gets the error, the host a diagnostic when a quota refuses.
    package func store(for id: String, in dataDirectory: String) -> FileKeyValueStore {
        let diagnostics = diagnosticLog
        return FileKeyValueStore(root: dataDirectory, folder: id, quota: storageQuota) { error in
            diagnostics.append(HostDiagnostic(.warning, code: .init(error.code.rawValue), message: error.message, plugin: id))
        }
    }

    package var allDiagnostics: [HostDiagnostic] { diagnostics.all }
    let diagnosticLog: DiagnosticLog

    package func provide(_ id: String, _ make: @escaping @Sendable (String) -> any Sendable) {
        custom.withLock { $0[id] = make }
    }

    /// The context for a plugin: the services it declared, minus those the
    /// host configuration denies; configuration merged with its defaults.
    package func context(
        for descriptor: Descriptor, defaults: [String: ConfigValue], generation: Int = 1, activePlugins: Set<String> = []
    ) -> PluginContext {
        let id = descriptor.id
        let owner = ServiceOwner(pluginID: id, generation: generation)
        let declared = Set(descriptor.services)
        let deniedByConfig = configuration.plugins[id]?.deniedServices ?? []
        var granted: [String: any Sendable] = [:]
        var denied: [String: String] = [:]
        let report = diagnostics.append
        for service in declared {
            if deniedByConfig.contains(service) {
                denied[service] = "denied by \(configuration.file ?? "the host configuration") (plugins.\(id).deniedServices)"
                continue
            }
            switch service {
            case Services.Logging.id:
                granted[service] = Self.grant(Services.Logging.self, HostLogger(label: id, sink: logSink))
            case Services.Storage.id:
                if let dataDirectory {
                    let store = store(for: id, in: dataDirectory)
                    granted[service] = Self.grant(Services.Storage.self, makeStore?(store) ?? store)
                } else {
                    denied[service] = "this host has no data directory"
                }
            case Services.Configuration.id:
                let (values, problems) = configuration.merged(for: id, defaults: defaults)
                problems.forEach(self.report)
                granted[service] = Self.grant(Services.Configuration.self, MergedConfiguration(values: values))
            case Services.Events.id:
                granted[service] = Self.grant(Services.Events.self, makeEventBus?(events, owner) ?? PluginEventBus(hub: events, owner: owner).directEventBus())
            case Services.Router.id:
                granted[service] = Self.grant(Services.Router.self, makeRouter?(owner) ?? PluginRouter(table: routes, owner: owner, report: report))
            case Services.Extensions.id:
                if let activator {
                    granted[service] = Self.grant(Services.Extensions.self, PluginExtensionLookup(activator: activator, owner: owner, starting: starting))
                } else {
                    denied[service] = "providers of a plugin's own extension points are looked up in the host, not in an isolated child"
                }
            default:
                if let make = custom.withLock({ $0[service] }) { granted[service] = make(id) }
            }
        }
        granted[PluginContext.activePluginsKey] = activePlugins
        return PluginContext(
            pluginID: id, pluginVersion: descriptor.version, declaredServices: declared,
            granted: granted, denied: denied)
    }

    /// `service` as `key`'s protocol type, boxed so the plugin's context
    /// hands it over without a cast (``GrantedService``); the box's type
    /// follows from the key, so it cannot name another service's protocol.
    private static func grant<Key: Services.Key>(_ key: Key.Type, _ service: Key.Service) -> any Sendable {
        GrantedService<Key.Service>(service)
    }

    /// Holds back events and routes of a generation a reload is starting.
    package func stage(_ owner: ServiceOwner) {
        events.stage(owner)
        routes.stage(owner)
    }

    package func unstage(_ owner: ServiceOwner) {
        events.unstage(owner)
        routes.unstage(owner)
    }

    /// Commits a reload: `new` receives events and routes, `old` nothing more.
    package func switchOver(from old: ServiceOwner, to new: ServiceOwner) {
        events.switchOver(from: old, to: new)
        routes.switchOver(from: old, to: new)
    }

    /// Ends the subscriptions and routes of one generation of a plugin.
    package func retire(_ pluginID: String, generation: Int = 1) {
        let owner = ServiceOwner(pluginID: pluginID, generation: generation)
        events.removeAll(owner: owner)
        routes.removeAll(owner: owner)
    }
}

/// The ``PluginConfiguration`` a plugin receives.
struct MergedConfiguration: PluginConfiguration {
    let values: [String: ConfigValue]
}
