/// One plugin a plugin builds on, as its descriptor declares it (see the
/// SDK's `PluginRequirement`): read in the scanner and cached, so the host
/// knows it before any of the plugin's code runs.
public struct PluginDependency: Sendable, Hashable, Codable {
    /// The required plugin's id.
    public let id: String
    /// The version range, as written (a caret, tilde or comparison range; docs/dependencies.md).
    public let range: String
    /// Whether the dependent runs without it.
    public let optional: Bool

    public init(id: String, range: String, optional: Bool = false) {
        self.id = id
        self.range = range
        self.optional = optional
    }
}
