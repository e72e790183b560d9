import Plugboard
import Synchronization

/// What lookups ask of the host's lifecycle: activate the available plugins
/// a lookup, an event or a route needs. The registry and the trigger table
/// receive it at init and never reach the host otherwise.
package protocol PluginActivating: AnyObject, Sendable {
    /// Activates the available plugins among `pluginIDs` (others are ignored).
    func activate(pluginIDs: Set<String>)
    /// Activates the available plugins providing `interfaceID`.
    func activateProviders(of interfaceID: String)
    /// The providers of a point a plugin publishes (``Services/Extensions``):
    /// declared on first use, with the providers of active plugins collected;
    /// the available ones started first when `activating`.
    func providers<Point: ExtensionPoint>(publishedAs point: Point.Type, activating: Bool) -> [Point.Provider]
}

/// The one link from the registry and the trigger table back to the
/// lifecycle. Lookups and activation need each other (activation creates
/// plugin contexts from the services; a published event may activate a
/// plugin), so one side must be reached through a link: this one is made
/// before both, handed to each at init, and joined to the lifecycle once,
/// inside the host's init, before the host is returned. Weak: the lifecycle
/// lives inside the host.
package final class ActivationLink: PluginActivating {
    private let target = Mutex<(weak: WeakTarget?, joined: Bool)>((nil, false))

    private struct WeakTarget {
        weak var value: (any PluginActivating)?
    }

    package init() {}

    /// Joins the link to `lifecycle`; once only.
    package func join(_ lifecycle: any PluginActivating) {
        target.withLock { target in
            precondition(!target.joined, "an activation link is joined once")
            target = (WeakTarget(value: lifecycle), true)
        }
    }

    private var lifecycle: (any PluginActivating)? { target.withLock { $0.weak?.value } }

    package func activate(pluginIDs: Set<String>) { lifecycle?.activate(pluginIDs: pluginIDs) }
    package func activateProviders(of interfaceID: String) { lifecycle?.activateProviders(of: interfaceID) }
    package func providers<Point: ExtensionPoint>(publishedAs point: Point.Type, activating: Bool) -> [Point.Provider] {
        lifecycle?.providers(publishedAs: point, activating: activating) ?? []
    }
}
