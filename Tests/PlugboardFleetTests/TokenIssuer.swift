import Foundation
import Testing

/// Bearer tokens as distribution's token auth takes them (a JWT signed with
/// RS256, the certificate in its `x5c` header, the certificate trusted by the
/// registry), made with the `openssl` command: a key and a self-signed
/// certificate per test, and one token for the repository, minted up front.
struct TokenIssuer {
    static let service = "plugboard-tests"
    static let issuer = "plugboard-test-issuer"
    let certificate: String
    let token: String

    init(in folder: Folder, repository: String) throws {
        let key = folder.sub("token.key"), certificate = folder.sub("token.pem"), der = folder.sub("token.der")
        try Self.openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=plugboard-test-token"])
        try Self.openssl(["x509", "-in", certificate, "-outform", "der", "-out", der])
        self.certificate = certificate
        let header = try JSONSerialization.data(withJSONObject: ["alg": "RS256", "typ": "JWT", "x5c": [try Data(contentsOf: URL(fileURLWithPath: der)).base64EncodedString()]])
        let now = Int(Date().timeIntervalSince1970)
        let claims = try JSONSerialization.data(withJSONObject: [
            "iss": Self.issuer, "sub": "fleet", "aud": Self.service, "exp": now + 3600, "nbf": now - 60, "iat": now - 60, "jti": UUID().uuidString,
            "access": [["type": "repository", "name": repository, "actions": ["pull", "push"]]],
        ] as [String: Any])
        let signed = Self.base64URL(header) + "." + Self.base64URL(claims)
        let input = folder.sub("token.input"), signature = folder.sub("token.sig")
        try Data(signed.utf8).write(to: URL(fileURLWithPath: input))
        try Self.openssl(["dgst", "-sha256", "-sign", key, "-out", signature, input])
        token = signed + "." + Self.base64URL(try Data(contentsOf: URL(fileURLWithPath: signature)))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl \(arguments.prefix(2).joined(separator: " ")) failed (Debian's openssl package)")
    }
}
