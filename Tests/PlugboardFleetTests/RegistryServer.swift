import Foundation
import Testing

/// A real OCI registry (Debian's docker-registry, CNCF distribution) started
/// by a test on 127.0.0.1 with a port it picks, its storage in a folder of
/// the test's (so a test can damage a stored blob), stopped at the end.
final class RegistryServer: @unchecked Sendable {
    // @unchecked: `process` is set once in init and only read after; Process itself is thread-safe for terminate/wait.
    let storage: Folder
    let port: Int
    private let process: Process

    /// htpasswd line for user `fleet`, password `s3cret` (bcrypt, made with Python's crypt once; a test credential).
    static let htpasswd = "fleet:$2b$12$DSDnONx4NOyFDCgNXDR1M.IhPtLtN31aET9PQcdqm8EfbBo1JkHxS"

    enum Auth {
        case none, basic
        /// Bearer tokens from a token service at `realm`, signed by the key of `certificate` (PEM).
        case token(realm: String, certificate: String)
    }

    init(auth: Auth = .none) throws {
        guard let program = Fleet.registryProgram else {
            Issue.record("docker-registry is not installed: run `sudo apt-get install docker-registry` (make test installs it as root)")
            throw Fleet.Missing(path: "docker-registry")
        }
        storage = try Folder("plugboard-registry")
        var config = """
        version: 0.1
        log:
          level: info
        storage:
          filesystem:
            rootdirectory: \(storage.path)/data
          delete:
            enabled: true
        http:
          addr: 127.0.0.1:0
          secret: plugboard-tests
        """
        if case let .token(realm, certificate) = auth {
            config += "\nauth:\n  token:\n    realm: \(realm)\n    service: \(TokenIssuer.service)\n    issuer: \(TokenIssuer.issuer)\n    rootcertbundle: \(certificate)\n"
        }
        if case .basic = auth {
            try Self.htpasswd.write(toFile: storage.sub("htpasswd"), atomically: true, encoding: .utf8)
            config += "\nauth:\n  htpasswd:\n    realm: plugboard-tests\n    path: \(storage.sub("htpasswd"))\n"
        }
        try config.write(toFile: storage.sub("config.yml"), atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["serve", storage.sub("config.yml")]
        let log = Pipe()
        process.standardError = log
        process.standardOutput = log
        try process.run()
        // The port is in the line "listening on 127.0.0.1:PORT": read until it comes.
        var text = ""
        var found: Int?
        while found == nil {
            let chunk = log.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let range = text.range(of: #"listening on 127\.0\.0\.1:[0-9]+"#, options: .regularExpression) {
                found = Int(text[range].split(separator: ":").last!)
            }
        }
        guard let found else {
            process.terminate()
            Issue.record("docker-registry did not start: \(text.suffix(2000))")
            throw Fleet.Missing(path: "docker-registry")
        }
        port = found
        // Keep draining the log so the registry never blocks on it.
        let handle = log.fileHandleForReading
        Thread.detachNewThread { while !handle.availableData.isEmpty {} }
    }

    deinit { stop() }

    /// Stops the registry (SIGTERM) and waits for it.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    var address: String { "127.0.0.1:\(port)" }

    /// The stored data file of a blob.
    func blobFile(_ digest: String) -> String {
        let hex = String(digest.dropFirst(7))
        return "\(storage.path)/data/docker/registry/v2/blobs/sha256/\(hex.prefix(2))/\(hex)/data"
    }
}
