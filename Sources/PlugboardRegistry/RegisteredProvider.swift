import Plugboard

/// One provider in the registry, with the plugin it came from.
public struct RegisteredProvider: Sendable {
    /// Id of the plugin that contributed it.
    public let pluginID: String
    /// Generation of that plugin (1 for the first load, +1 per hot reload).
    public let generation: Int
    /// Interface id it provides.
    public let interfaceID: String
    /// The provider, as the plugin handed it over.
    public let provider: any Sendable

    package init(pluginID: String, generation: Int, interfaceID: String, provider: any Sendable) {
        self.pluginID = pluginID
        self.generation = generation
        self.interfaceID = interfaceID
        self.provider = provider
    }
}
