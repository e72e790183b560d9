import Plugboard

/// The aggregated result of every provider that adopts ``Validating``.
public struct ValidationReport: Sendable, Encodable {
    public struct Result: Sendable, Encodable {
        public let plugin: String
        public let interface: String
        public let issues: [ValidationIssue]
        public var passed: Bool { issues.isEmpty }
    }

    /// One per adopting provider, ordered by interface then plugin id.
    public let results: [Result]
    public var passed: Bool { results.allSatisfy(\.passed) }
    public var issues: [ValidationIssue] { results.flatMap(\.issues) }
}

extension PluginHost {
    /// Runs ``Validating/validate()`` on every registered provider that
    /// adopts it, across all extension points; others are skipped.
    public func validate() -> ValidationReport {
        var results: [ValidationReport.Result] = []
        for interface in registry.declaredInterfaces.map(\.id).sorted() {
            for registration in registry.registrations(for: interface) {
                guard let validating = registration.provider as? any Validating else { continue }
                results.append(.init(plugin: registration.pluginID, interface: interface, issues: validating.validate()))
            }
        }
        return ValidationReport(results: results)
    }

    /// Navigates by path through the router plugins registered with.
    public func navigate(to path: String) throws(RouteError) -> RenderedSection {
        try services.routes.navigate(to: path)
    }

    /// Every registered route pattern with its plugin.
    public var routes: [(pattern: String, plugin: String)] {
        services.routes.routes.map { ($0.pattern, $0.owner) }
    }

    /// The event bus, for the host itself (publisher and subscriber id `host`).
    public var events: any EventBus { PluginEventBus(hub: services.events, owner: .host) }

    /// The router, for the host itself (routes it registers are owned by `host`).
    public var router: any Router { PluginRouter(table: services.routes, owner: .host, report: services.report) }
}

extension PluginHost {
    /// The storage the host gives plugin `pluginID` (nil without a data
    /// directory): for hosts that inspect or seed plugin data.
    public func storage(for pluginID: String) -> (any KeyValueStore)? {
        guard Descriptor.isValidID(pluginID), let directory = services.dataDirectory else { return nil }
        return FileKeyValueStore(directory: "\(directory)/\(pluginID)")
    }
}
