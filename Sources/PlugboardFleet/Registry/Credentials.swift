import FoundationEssentials

/// A user name and password for a registry, from the usual places, in
/// order: `PLUGBOARD_REGISTRY_USERNAME` and `PLUGBOARD_REGISTRY_PASSWORD`;
/// the `auths` entry for the host in Docker's `config.json`
/// (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`), as
/// `docker login` and `oras login` write it. Never printed.
package struct Credentials: Sendable {
    package let username: String
    package let password: String

    package init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// The `Authorization` value for Basic authentication.
    var basic: String { "Basic " + Data("\(username):\(password)".utf8).base64EncodedString() }

    package static func find(for host: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Credentials? {
        if let username = environment["PLUGBOARD_REGISTRY_USERNAME"], let password = environment["PLUGBOARD_REGISTRY_PASSWORD"] {
            return Credentials(username: username, password: password)
        }
        let file = environment["DOCKER_CONFIG"].map { $0 + "/config.json" } ?? environment["HOME"].map { $0 + "/.docker/config.json" }
        guard let file, let data = FileManager.default.contents(atPath: file),
              let config = try? JSONDecoder().decode(DockerConfig.self, from: data) else { return nil }
        let entry = config.auths?[host] ?? config.auths?["https://" + host] ?? config.auths?["http://" + host]
        guard let encoded = entry?.auth, let decoded = Data(base64Encoded: encoded),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
        return Credentials(username: String(text[..<colon]), password: String(text[text.index(after: colon)...]))
    }

    private struct DockerConfig: Decodable {
        struct Entry: Decodable { let auth: String? }
        let auths: [String: Entry]?
    }
}
