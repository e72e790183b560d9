@_spi(PlugboardHost) import Plugboard
import PlugboardAdmission
import PlugboardServices

/// What a host reaches of its services directly: routes, events, storage.
extension PluginHost {
    /// Every registered route pattern with its plugin.
    public var routes: [Route] {
        services.routes.routes.map { Route(pattern: $0.pattern, plugin: $0.owner) }
    }

    /// The event bus, for the host itself (publisher and subscriber id `host`).
    public var events: any EventBus { services.hostEvents }

    /// The router, for the host itself: `host.router.navigate(to:as:)`
    /// follows any plugin's route; routes it registers are owned by `host`.
    public var router: any Router { PluginRouter(table: services.routes, owner: .host, report: services.report) }
}

extension PluginHost {
    /// The storage the host gives plugin `pluginID` (nil without a data
    /// directory): for hosts that inspect or seed plugin data.
    public func storage(for pluginID: String) -> (any KeyValueStore)? {
        guard Descriptor.isValidID(pluginID), let directory = services.dataDirectory else { return nil }
        return services.store(for: pluginID, in: directory)
    }
}
