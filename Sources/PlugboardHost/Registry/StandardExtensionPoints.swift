import Plugboard

extension PluginHost {
    /// Declares every extension point the SDK defines (``Commands``, ``ScreenSections``).
    /// The `plugboard` tool and the demo host use exactly these.
    public func declareStandardExtensionPoints() {
        declare(Commands.self)
        declare(ScreenSections.self)
    }
}
