#if canImport(Glibc)
import Glibc
#endif

/// A need a plugin declares in its descriptor (SDK 2.3, `SandboxNeed`),
/// parsed once from the text the scan read.
package enum DeclaredNeed: Sendable, Hashable {
    case tcpConnect(Int)
    case tcpBind(Int)
    case network
    case read(String)

    /// nil for text no SDK writes: an unknown kind, a port outside
    /// 1-65535, a relative path or one holding a line break.
    package init?(_ text: String) {
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
            // No "." or ".." component: a path that climbs out of a grant is no need.
            let components = value.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            guard value.hasPrefix("/"), !value.contains("\n"), !value.contains("\0"), value.utf8.count <= 1024,
                  !components.contains(where: { $0 == "." || $0 == ".." || $0.isEmpty }) || value == "/"
            else { return nil }
            self = .read(value)
        default:
            return nil
        }
    }

    /// Whether `grants` covers it: a port granted (or the whole network),
    /// a path at or under a granted one.
    package func isGranted(by grants: PluginSandbox.Grants) -> Bool {
        switch self {
        case let .tcpConnect(port): grants.network || grants.tcpConnect.contains(port)
        case let .tcpBind(port): grants.network || grants.tcpBind.contains(port)
        case .network: grants.network
        case let .read(path): grantingPath(for: path, in: grants) != nil
        }
    }

    /// The path a read need is given, resolved (links followed, as its
    /// rule would): under the resolved form of a granted path, else nil.
    package func grantingPath(for path: String, in grants: PluginSandbox.Grants) -> String? {
        let need = Self.resolved(path)
        for granted in grants.readPaths.map(Self.resolved) where need == granted || need.hasPrefix(granted == "/" ? "/" : granted + "/") {
            return need
        }
        return nil
    }

    /// `path` with its links and `..` resolved; itself when it does not exist.
    static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
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
