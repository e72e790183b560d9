extension PluginHost {
    /// A registered route: its pattern and who registered it.
    public struct Route: Sendable, Equatable {
        /// The pattern as registered, such as `/restaurants/:id`.
        public let pattern: String
        /// The plugin id that registered it, or `host`.
        public let plugin: String
    }
}
