import PlugboardCore

extension SandboxPolicy {
    /// What a child gets of `grants`: only what `needs` declares too.
    package static func granted(_ grants: PluginSandbox.Grants, declared needs: [DeclaredNeed]) -> PluginSandbox.Grants {
        var given = PluginSandbox.Grants()
        for need in needs where need.isGranted(by: grants) {
            switch need {
            case let .tcpConnect(port): given.tcpConnect.insert(port)
            case let .tcpBind(port): given.tcpBind.insert(port)
            case .network: given.network = true
            case let .read(path): if let resolved = need.grantingPath(for: path, in: grants) { given.readPaths.append(resolved) }
            }
        }
        return given
    }
}
