import Plugboard

extension PluginHost {
    /// Declares the extension point the SDK defines (``Commands``). A host
    /// with its own points declares them too (the demo's are in `DemoInterfaces`).
    public func declareStandardExtensionPoints() {
        declare(Commands.self)
    }
}
