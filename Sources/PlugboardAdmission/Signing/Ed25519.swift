import CPlugboardHost

/// Ed25519 (RFC 8032) and BLAKE2b-512 through the system's OpenSSL
/// `libcrypto`: what signed lock files are checked with. No cryptography is
/// implemented here.
package enum Ed25519 {
    /// The public key of a 32-byte secret seed; nil for a wrong length.
    package static func publicKey(seed: [UInt8]) -> [UInt8]? {
        guard seed.count == 32 else { return nil }
        var key = [UInt8](repeating: 0, count: 32)
        return plugboard_ed25519_public_key(seed, &key) == 0 ? key : nil
    }

    /// The 64-byte signature of `message` with a 32-byte secret seed.
    package static func sign(_ message: [UInt8], seed: [UInt8]) -> [UInt8]? {
        guard seed.count == 32 else { return nil }
        var signature = [UInt8](repeating: 0, count: 64)
        return plugboard_ed25519_sign(seed, message, message.count, &signature) == 0 ? signature : nil
    }

    /// Whether `signature` signs `message` for `publicKey`.
    package static func verify(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32 else { return false }
        return plugboard_ed25519_verify(publicKey, message, message.count, signature) == 1
    }

    /// BLAKE2b-512 of `message` (minisign signs this digest of a file).
    package static func blake2b512(_ message: [UInt8]) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: 64)
        return plugboard_blake2b512(message, message.count, &digest) == 0 ? digest : nil
    }
}
