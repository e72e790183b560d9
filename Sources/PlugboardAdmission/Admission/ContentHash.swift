/// A fast 64-bit fingerprint of a file's bytes: four independent lanes of
/// multiply-xor over 8-byte words, so it runs at memory speed.
///
/// It tells whether the bytes about to be loaded are the bytes that were
/// checked and scanned (accidental change, not an attacker: a hash that
/// resists forgery is the lock file's job).
package enum ContentHash {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F

    package static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var lanes: (UInt64, UInt64, UInt64, UInt64) = (prime1, prime2, prime1 ^ prime2, ~prime1)
        let count = bytes.count
        var offset = 0
        @inline(__always) func mix(_ lane: UInt64, _ word: UInt64) -> UInt64 {
            let x = (lane ^ word) &* prime1
            return (x << 31 | x >> 33) &* prime2
        }
        while count - offset >= 32 {
            lanes.0 = mix(lanes.0, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            lanes.1 = mix(lanes.1, bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
            lanes.2 = mix(lanes.2, bytes.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self))
            lanes.3 = mix(lanes.3, bytes.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self))
            offset += 32
        }
        var hash = mix(mix(mix(mix(UInt64(count), lanes.0), lanes.1), lanes.2), lanes.3)
        while offset < count {
            hash = mix(hash, UInt64(bytes[offset]))
            offset += 1
        }
        hash ^= hash >> 29
        hash &*= prime1
        return hash ^ (hash >> 32)
    }

    /// 16 hex digits, as stored in the registry cache.
    package static func text(_ hash: UInt64) -> String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
