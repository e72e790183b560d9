import PlugboardCore

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
    /// settings file's `"isolated"`, `"sandboxed"` and `"children"` over
    /// ``Isolation/unsigned`` (when the host did not sign it) or
    /// ``Isolation/others``. A sandbox implies a child; `"isolated": false`
    /// means in process, so no sandbox either.
    func isolation(of id: String, signedByHost: Bool = true) -> PluginIsolation {
        if let chosen = isolation.plugins[id] { return chosen }
        var chosen = (signedByHost ? nil : isolation.unsigned) ?? isolation.others
        let plugin = settings.plugins[id]
        if let sandboxed = plugin?.sandboxed {
            chosen.sandbox = sandboxed ? chosen.sandbox ?? PluginSandbox() : nil
            chosen.isolated = sandboxed || chosen.isolated
        }
        if let isolated = plugin?.isolated {
            chosen.isolated = isolated
            if !isolated { chosen.sandbox = nil }
        }
        if let grants = plugin?.grants, chosen.sandbox != nil { chosen.sandbox?.grants = grants }
        if let children = plugin?.children { chosen.children = children }
        if let resources = plugin?.resources { chosen.limits = resources.applied(to: chosen.limits) }
        return chosen
    }
}
