import CPlugboardHost

/// SHA-256, for lock files of plugin hashes, from the system's OpenSSL
/// libcrypto (CPlugboardHost/sha256.c): cryptography is never written here.
/// Checked against the NIST example vectors in the tests.
package struct SHA256: ~Copyable {
    private let context: UnsafeMutableRawPointer

    package init() {
        // Only out of memory makes this fail.
        guard let context = plugboard_sha256_begin() else { fatalError("libcrypto could not start a SHA-256 computation") }
        self.context = context
    }

    deinit { plugboard_sha256_discard(context) }

    /// The lowercase hex digest of `bytes`.
    package static func hex<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        return Hex.encode(hasher.finalize())
    }

    package mutating func update<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        let done = bytes.withContiguousStorageIfAvailable { buffer in
            plugboard_sha256_update(context, buffer.baseAddress, buffer.count)
        } ?? Array(bytes).withUnsafeBytes { plugboard_sha256_update(context, $0.baseAddress, $0.count) }
        precondition(done == 0, "libcrypto failed a SHA-256 update")
    }

    /// The 32-byte digest; the hasher is used up.
    package consuming func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let context = self.context
        discard self
        let done = plugboard_sha256_end(context, &digest)
        precondition(done == 0, "libcrypto failed to finish a SHA-256 digest")
        return digest
    }
}
