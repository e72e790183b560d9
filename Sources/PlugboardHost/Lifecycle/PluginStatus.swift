/// Where one candidate plugin file ended up.
public enum PluginStatus: String, Sendable, Codable, CaseIterable {
    /// Loaded, created, activated; its providers are in the registry.
    case active
    /// Refused by a check before its code ran (file, ABI, toolchain, descriptor).
    case rejected
    /// Its own code threw (init or activate) or handed over wrong providers.
    case failed
    /// Turned off by the host's configuration.
    case disabled
}
