extension PluginLoadError {
    package static func loadFailed(path: String, dlerror: String) -> PluginLoadError {
        // The common case: a library it links (a host's interface package) is not installed.
        let hint = dlerror.contains("cannot open shared object file")
            ? "; a library it links is not found: a host's interface library goes in the lib/ folder of the plugins directory (beside the plugin files), others where the system loader looks"
            : ""
        return PluginLoadError(code: .loadFailed, path: path, reason: "dlopen failed: \(dlerror)\(hint)")
    }
}
