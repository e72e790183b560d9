import Plugboard
import PlugboardRegistry

/// The ``ExtensionLookup`` a plugin receives: the providers of a point it
/// publishes, read from the host's registry (the point is declared there on
/// first use).
struct PluginExtensionLookup: ExtensionLookup {
    let activator: any PluginActivating

    func providers<Point: ExtensionPoint>(of point: Point.Type) -> [Point.Provider] {
        activator.providers(publishedAs: point)
    }
}
