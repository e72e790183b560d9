import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// An Ed25519 public key with minisign's 8-byte key id, in minisign's public
/// key format (`untrusted comment: ...` then base64 of `Ed`, the key id and
/// the key), so `minisign -V -p KEY.pub` reads the same file.
package struct PublicSigningKey: Sendable, Equatable {
    package let id: [UInt8]
    package let key: [UInt8]

    /// The key id as minisign prints it: 16 hex digits, most significant byte first.
    package var idText: String { Self.idText(id) }

    /// A key id as minisign prints it, whether or not the key is at hand.
    package static func idText(_ id: [UInt8]) -> String { Hex.encode(id.reversed()).uppercased() }

    package init?(id: [UInt8], key: [UInt8]) {
        guard id.count == 8, key.count == 32 else { return nil }
        self.id = id
        self.key = key
    }

    /// Parses minisign's public key file (or its base64 line alone).
    package init?(text: String) {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
        guard let line = lines.first(where: { !$0.hasPrefix("untrusted comment:") }),
              let bytes = Data(base64Encoded: line).map([UInt8].init), bytes.count == 42,
              bytes[0] == UInt8(ascii: "E"), bytes[1] == UInt8(ascii: "d")
        else { return nil }
        self.init(id: Array(bytes[2..<10]), key: Array(bytes[10..<42]))
    }

    /// Every public key of a file holding one or more in minisign's format.
    package static func all(in text: String) -> [PublicSigningKey] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let line = line.trimmingBlanks()
            return line.isEmpty || line.hasPrefix("untrusted comment:") ? nil : PublicSigningKey(text: line)
        }
    }

    package var text: String {
        "untrusted comment: minisign public key \(idText)\n" + Data(Array("Ed".utf8) + id + key).base64EncodedString() + "\n"
    }
}

/// An Ed25519 secret key (its 32-byte seed) with its key id, as
/// `plugboard keygen` writes it, or minisign's own unencrypted key file
/// (`minisign -G -W`): readable by its owner only, refused otherwise.
package struct SigningKey: Sendable {
    package let id: [UInt8]
    package let seed: [UInt8]
    package let publicKey: PublicSigningKey

    package init?(id: [UInt8], seed: [UInt8]) {
        guard let key = Ed25519.publicKey(seed: seed), let publicKey = PublicSigningKey(id: id, key: key) else { return nil }
        self.id = id
        self.seed = seed
        self.publicKey = publicKey
    }

    /// A new key from the system's random source.
    package static func generate() -> SigningKey? {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<8).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let seed = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return SigningKey(id: id, seed: seed)
    }

    package struct FileError: Error, CustomStringConvertible {
        package let description: String
    }

    /// `untrusted comment:` then base64 of `Ed`, the key id and the seed.
    package var text: String {
        "untrusted comment: plugboard secret key \(publicKey.idText) (keep it private)\n"
            + Data(Array("Ed".utf8) + id + seed).base64EncodedString() + "\n"
    }

    /// Reads a secret key file: refused when anyone but its owner can read or write it.
    package static func load(_ path: String) throws(FileError) -> SigningKey {
        var status = stat()
        guard stat(path, &status) == 0 else { throw FileError(description: "\(path): cannot read the secret key (\(String(cString: strerror(errno))))") }
        guard status.st_mode & 0o077 == 0 else {
            throw FileError(description: "\(path): the secret key can be read or written by others (mode \(String(status.st_mode & 0o777, radix: 8))); chmod 600 \(path), and make a new key if others may have read it")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let line = text.split(whereSeparator: \.isNewline).first(where: { !$0.hasPrefix("untrusted comment:") }),
              let bytes = Data(base64Encoded: String(line)).map([UInt8].init), bytes.count >= 2,
              bytes[0] == UInt8(ascii: "E"), bytes[1] == UInt8(ascii: "d")
        else { throw FileError(description: "\(path): not a secret key (write one with `plugboard keygen`, or `minisign -G -W`)") }
        if bytes.count == 42, let key = SigningKey(id: Array(bytes[2..<10]), seed: Array(bytes[10..<42])) { return key }
        return try minisignKey(bytes, path: path)
    }

    /// minisign's own secret key file: `Ed`, the key-derivation algorithm,
    /// `B2`, a salt and two limits (used when a password encrypts it), then
    /// the key id, the 64-byte secret key (seed and public key) and a checksum.
    private static func minisignKey(_ bytes: [UInt8], path: String) throws(FileError) -> SigningKey {
        guard bytes.count == 158, bytes[4] == UInt8(ascii: "B"), bytes[5] == UInt8(ascii: "2") else {
            throw FileError(description: "\(path): not a secret key (write one with `plugboard keygen`, or `minisign -G -W`)")
        }
        guard bytes[2] == 0, bytes[3] == 0 else {
            throw FileError(description: "\(path): a password-protected minisign key, which plugboard does not decrypt; sign with minisign itself (`minisign -S -s \(path) -m plugboard.lock -t 'sequence:N expires:DATE channel:NAME'`, docs/operations.md), or use a key from `plugboard keygen` or `minisign -G -W`")
        }
        let id = Array(bytes[54..<62]), secret = Array(bytes[62..<126])
        // The secret key carries its public half: a damaged file shows as a mismatch.
        guard let key = SigningKey(id: id, seed: Array(secret[0..<32])), key.publicKey.key == Array(secret[32..<64]) else {
            throw FileError(description: "\(path): a damaged minisign secret key (its public half does not match); restore it from a backup")
        }
        return key
    }

    /// Writes the key pair: `path` (mode 600, never over an existing file) and `path.pub`.
    package func write(to path: String) throws(FileError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw FileError(description: "\(path): cannot create the secret key (\(String(cString: strerror(errno)))); it is never written over an existing file") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced else { throw FileError(description: "\(path): cannot write the secret key") }
        do {
            try publicKey.text.write(toFile: path + ".pub", atomically: true, encoding: .utf8)
        } catch {
            throw FileError(description: "\(path).pub: cannot write the public key (\(error))")
        }
    }
}
