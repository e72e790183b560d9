extension HostSettings {
    /// A plugin's `"grants"` object: what it may do sandboxed beyond the
    /// defaults (``PluginSandbox/Grants``): `tcpConnect` and `tcpBind` (port
    /// arrays), `network` (a boolean), `readPaths` (absolute paths). A
    /// wrong value is reported and left out; the rest applies.
    mutating func grants(_ fields: [String: JSONValue], at path: String) -> PluginSandbox.Grants {
        var grants = PluginSandbox.Grants()
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            let keyPath = "\(path).\(key)"
            switch (key, value) {
            case let ("tcpConnect", .array(items)), let ("tcpBind", .array(items)):
                for item in items {
                    guard case let .int(port) = item, (1...65535).contains(port) else {
                        report(.error, "config-invalid-type", "ports are whole numbers from 1 to 65535, found \(item.typeName); left out", keyPath: keyPath)
                        continue
                    }
                    if key == "tcpConnect" { grants.tcpConnect.insert(port) } else { grants.tcpBind.insert(port) }
                }
            case let ("network", .bool(network)):
                grants.network = network
            case let ("readPaths", .array(items)):
                for item in items {
                    guard case let .string(granted) = item, granted.hasPrefix("/") else {
                        report(.error, "config-invalid-type", "read paths are absolute paths, found \(item.typeName); left out", keyPath: keyPath)
                        continue
                    }
                    grants.readPaths.append(granted)
                }
            default:
                report(.warning, "config-unknown-key", "unknown or mistyped grant '\(key)' (known: tcpConnect, tcpBind, network, readPaths); ignored", keyPath: keyPath)
            }
        }
        return grants
    }
}
