/// The load error of a child's resource bounds (docs/sandbox.md, "Resources").
extension PluginLoadError {
    package static func resourceBoundsUnavailable(path: String, id: String, missing: [String]) -> PluginLoadError {
        PluginLoadError(code: .resourceBoundsUnavailable, path: path,
            reason: "plugin \(id) must run with its resource bounds and this machine cannot hold \(missing.joined(separator: "; ")); nothing of the plugin ran. Fix: give the host a cgroup it may manage (docs/sandbox.md, \"Resources\"), or let it start without them (PluginIsolation.Limits.bounds = .bestEffort)",
            status: .failed)
    }
}
