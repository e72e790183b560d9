/// A need a plugin declares in its descriptor (SDK 2.3, `SandboxNeed`),
/// parsed once from the text the scan read.
enum DeclaredNeed: Sendable, Hashable {
    case tcpConnect(Int)
    case tcpBind(Int)
    case network
    case read(String)

    /// nil for text no SDK writes: an unknown kind, a port outside
    /// 1-65535, a relative path or one holding a line break.
    init?(_ text: String) {
        if text == "network" {
            self = .network
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let value = String(text[text.index(after: colon)...])
        switch text[..<colon] {
        case "tcp-connect", "tcp-bind":
            guard let port = Int(value), (1...65535).contains(port) else { return nil }
            self = text.hasPrefix("tcp-connect") ? .tcpConnect(port) : .tcpBind(port)
        case "read":
            guard value.hasPrefix("/"), !value.contains("\n"), !value.contains("\0"), value.utf8.count <= 1024 else { return nil }
            self = .read(value)
        default:
            return nil
        }
    }

    /// Whether `grants` covers it: a port granted (or the whole network),
    /// a path at or under a granted one.
    func isGranted(by grants: PluginSandbox.Grants) -> Bool {
        switch self {
        case let .tcpConnect(port): grants.network || grants.tcpConnect.contains(port)
        case let .tcpBind(port): grants.network || grants.tcpBind.contains(port)
        case .network: grants.network
        case let .read(path): grants.readPaths.contains { granted in path == granted || path.hasPrefix(granted.hasSuffix("/") ? granted : granted + "/") }
        }
    }

    /// How a host grants it, for the refusal's fix.
    var grantSpelling: String {
        switch self {
        case let .tcpConnect(port): "grants.tcpConnect: [\(port)]"
        case let .tcpBind(port): "grants.tcpBind: [\(port)]"
        case .network: "grants.network: true"
        case let .read(path): "grants.readPaths: [\"\(path)\"]"
        }
    }
}

extension SandboxPolicy {
    /// What a child gets of `grants`: only what `needs` declares too.
    static func granted(_ grants: PluginSandbox.Grants, declared needs: [DeclaredNeed]) -> PluginSandbox.Grants {
        var given = PluginSandbox.Grants()
        for need in needs where need.isGranted(by: grants) {
            switch need {
            case let .tcpConnect(port): given.tcpConnect.insert(port)
            case let .tcpBind(port): given.tcpBind.insert(port)
            case .network: given.network = true
            case let .read(path): given.readPaths.append(path)
            }
        }
        return given
    }
}
