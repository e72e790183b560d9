import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// A lock file's signature in minisign's format (`plugboard.lock.minisig`):
///
/// ```
/// untrusted comment: signature from plugboard secret key ABCD...
/// base64("ED" + key id + Ed25519(BLAKE2b-512(lock file)))
/// trusted comment: sequence:7 expires:2027-01-01T00:00:00Z channel:stable
/// base64(Ed25519(signature + trusted comment))
/// ```
///
/// The trusted comment is covered by the second signature, so its sequence
/// number (only ever goes up), expiry and channel cannot be changed without
/// the key. Stock `minisign -V` verifies the same file.
package struct LockSignature: Sendable, Equatable {
    /// What the trusted comment says.
    package struct Terms: Sendable, Equatable {
        package var sequence: UInt64
        package var expires: Date
        package var channel: String

        package init(sequence: UInt64, expires: Date, channel: String) {
            self.sequence = sequence
            self.expires = expires
            self.channel = channel
        }

        var text: String {
            "sequence:\(sequence) expires:\(UTCTimestamp.string(from: expires)) channel:\(channel)"
        }

        /// The terms a trusted comment states; nil if it states none.
        package init?(trustedComment text: String) {
            var fields: [String: String] = [:]
            // minisign's own comments separate fields with tabs.
            for part in text.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                guard let colon = part.firstIndex(of: ":") else { continue }
                fields[String(part[..<colon])] = String(part[part.index(after: colon)...])
            }
            guard let sequence = fields["sequence"].flatMap(UInt64.init), let expires = fields["expires"].flatMap(UTCTimestamp.date(from:)),
                  let channel = fields["channel"], !channel.isEmpty
            else { return nil }
            self.init(sequence: sequence, expires: expires, channel: channel)
        }
    }

    /// Why a signature does not vouch for a lock file: `signature-invalid`
    /// (malformed, or either signature does not verify) or `key-unknown`.
    package struct Failure: Error, Sendable, Equatable {
        package let code: String
        package let reason: String
    }

    package let keyID: [UInt8]
    package let signature: [UInt8]
    package let trustedComment: String
    let globalSignature: [UInt8]

    /// Signs `lock` (the lock file's bytes) with `key`.
    package static func sign(_ lock: [UInt8], key: SigningKey, terms: Terms) -> LockSignature? {
        guard let digest = Ed25519.blake2b512(lock), let signature = Ed25519.sign(digest, seed: key.seed) else { return nil }
        let comment = terms.text
        guard let global = Ed25519.sign(signature + Array(comment.utf8), seed: key.seed) else { return nil }
        return LockSignature(keyID: key.id, signature: signature, trustedComment: comment, globalSignature: global)
    }

    package var text: String {
        "untrusted comment: signature from plugboard secret key \(PublicSigningKey.idText(keyID))\n"
            + Data(Array("ED".utf8) + keyID + signature).base64EncodedString() + "\n"
            + "trusted comment: \(trustedComment)\n"
            + Data(globalSignature).base64EncodedString() + "\n"
    }

    /// Parses a `.minisig` file; nil when it is not one.
    package init?(text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= 4, lines[0].hasPrefix("untrusted comment:"), lines[2].hasPrefix("trusted comment: "),
              let first = Data(base64Encoded: lines[1]).map([UInt8].init), first.count == 74,
              first[0] == UInt8(ascii: "E"), first[1] == UInt8(ascii: "D"),
              let global = Data(base64Encoded: lines[3]).map([UInt8].init), global.count == 64
        else { return nil }
        self.init(keyID: Array(first[2..<10]), signature: Array(first[10..<74]),
                  trustedComment: String(lines[2].dropFirst("trusted comment: ".count)), globalSignature: global)
    }

    init(keyID: [UInt8], signature: [UInt8], trustedComment: String, globalSignature: [UInt8]) {
        self.keyID = keyID
        self.signature = signature
        self.trustedComment = trustedComment
        self.globalSignature = globalSignature
    }

    /// Checks, in order: a trusted key made it, the signature of the lock
    /// file's bytes, the signature of the trusted comment; its terms when all hold.
    package func verify(_ lock: [UInt8], trustedKeys: [PublicSigningKey]) -> Result<Terms, Failure> {
        verifySignatures(lock, trustedKeys: trustedKeys).flatMap { _ in
            guard let terms = Terms(trustedComment: trustedComment) else {
                return .failure(Failure(code: "signature-invalid", reason: "the trusted comment has no sequence, expiry and channel (\(trustedComment)); sign with `plugboard lock --sign`"))
            }
            return .success(terms)
        }
    }

    /// The key whose both signatures hold for `message` (minisign's own
    /// check, whatever the trusted comment says).
    func verifySignatures(_ message: [UInt8], trustedKeys: [PublicSigningKey]) -> Result<PublicSigningKey, Failure> {
        guard let key = trustedKeys.first(where: { $0.id == keyID }) else {
            let id = PublicSigningKey.idText(keyID)
            return .failure(Failure(code: "key-unknown", reason: "signed with key \(id), which this host does not trust; add its public key to the trusted keys, or sign with a trusted key"))
        }
        guard let digest = Ed25519.blake2b512(message), Ed25519.verify(signature, of: digest, publicKey: key.key) else {
            return .failure(Failure(code: "signature-invalid", reason: "the signature does not match the lock file's bytes (changed after signing, or signed for another file); sign the lock file again"))
        }
        guard Ed25519.verify(globalSignature, of: signature + Array(trustedComment.utf8), publicKey: key.key) else {
            return .failure(Failure(code: "signature-invalid", reason: "the trusted comment's signature does not verify (the comment was changed after signing); sign the lock file again"))
        }
        return .success(key)
    }
}
