/// What the host reads out of its configuration, resolved.
extension PluginHost.Configuration {
    /// Every disabled id with its source: ``disabledPlugins`` and
    /// `"enabled": false` entries of ``settings``.
    var allDisabled: [String: String] {
        var all = disabledPlugins
        for (id, plugin) in settings.plugins where !plugin.enabled {
            all[id] = all[id] ?? "\(settings.file ?? "the host configuration") (plugins.\(id).enabled is false)"
        }
        return all
    }

    /// Where plugin `id`'s code runs: ``Isolation/plugins``, else the
    /// settings file's `"isolated"`, else ``Isolation/others``.
    func isolation(of id: String) -> PluginIsolation {
        if let chosen = isolation.plugins[id] { return chosen }
        if let isolated = settings.plugins[id]?.isolated {
            var chosen = isolation.others
            chosen.isolated = isolated
            return chosen
        }
        return isolation.others
    }
}
