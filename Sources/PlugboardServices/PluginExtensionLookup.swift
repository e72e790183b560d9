import Plugboard
import PlugboardRegistry

/// The ``ExtensionLookup`` a plugin receives: the providers of a point it
/// publishes, read from the host's registry (the point is declared there on
/// first use). While its plugin starts, the providers active now: it starts
/// nothing (``StartingPlugins``).
struct PluginExtensionLookup: ExtensionLookup {
    let activator: any PluginActivating
    let owner: ServiceOwner
    let starting: StartingPlugins

    func providers<Point: ExtensionPoint>(of point: Point.Type) -> [Point.Provider] {
        activator.providers(publishedAs: point, activating: !starting.contains(owner))
    }
}
