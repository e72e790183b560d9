import Foundation
import PlugboardHostTesting
import Testing

/// A real registry started by a test (PlugboardHostTesting's LocalRegistry),
/// with the authentication a test asks for, stopped at the end.
final class RegistryServer: Sendable {
    let storage: Folder
    let registry: LocalRegistry

    /// htpasswd line for user `fleet`, password `s3cret` (bcrypt, made with Python's crypt once; a test credential).
    static let htpasswd = "fleet:$2b$12$DSDnONx4NOyFDCgNXDR1M.IhPtLtN31aET9PQcdqm8EfbBo1JkHxS"

    enum Auth {
        case none, basic
        /// Bearer tokens from a token service at `realm`, signed by the key of `certificate` (PEM).
        case token(realm: String, certificate: String)
    }

    init(auth: Auth = .none) throws {
        storage = try Folder("plugboard-registry")
        var config = ""
        switch auth {
        case .none: break
        case .basic:
            try Self.htpasswd.write(toFile: storage.sub("htpasswd"), atomically: true, encoding: .utf8)
            config = "auth:\n  htpasswd:\n    realm: plugboard-tests\n    path: \(storage.sub("htpasswd"))\n"
        case let .token(realm, certificate):
            config = "auth:\n  token:\n    realm: \(realm)\n    service: \(TokenIssuer.service)\n    issuer: \(TokenIssuer.issuer)\n    rootcertbundle: \(certificate)\n"
        }
        do { registry = try LocalRegistry(storage: storage.sub("registry"), extraConfig: config) } catch {
            Issue.record("\(error)")
            throw error
        }
    }

    var port: Int { registry.port }
    var address: String { registry.address }
    func stop() { registry.stop() }
    func blobFile(_ digest: String) -> String { registry.blobFile(digest) }
}
