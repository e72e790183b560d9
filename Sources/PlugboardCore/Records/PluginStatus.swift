/// Where one candidate plugin file ended up.
public enum PluginStatus: String, Sendable, Codable, CaseIterable {
    /// Checked and scanned: compatible, not loaded yet. Activated on the first
    /// lookup of an extension point it provides, or one of its activation
    /// triggers (see ``PluginRecord/activation``).
    case available
    /// Loaded, created, activated; its providers are in the registry.
    case active
    /// Refused by a check before its code ran in the host (file, ABI,
    /// toolchain, descriptor).
    case rejected
    /// Crashed, exited or hung while being scanned, or crashed the host in
    /// init, activate or a call: not loaded until the file changes or a
    /// rescan is asked for. ``PluginRecord/quarantine`` says why.
    case quarantined
    /// Its own code threw (init or activate) or handed over wrong providers.
    case failed
    /// Turned off by the host's configuration.
    case disabled
}
