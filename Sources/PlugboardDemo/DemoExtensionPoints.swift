import DemoInterfaces
import Plugboard
import PlugboardHost

extension PluginHost {
    /// Declares the demo host's extension points: the SDK's ``Commands`` and
    /// the screen sections of `DemoInterfaces`, a host's own interface package.
    public func declareDemoExtensionPoints() {
        declare(Commands.self)
        declare(ScreenSections.self)
    }
}
