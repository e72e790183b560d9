import PlugboardHost
import Testing

/// The signing primitives (OpenSSL libcrypto) against RFC 8032's test
/// vectors and RFC 7693's BLAKE2b-512 example.
@Suite struct Ed25519Tests {
    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    /// RFC 8032, section 7.1, tests 1 to 3: seed, public key, message, signature.
    static let vectors: [(String, String, String, String)] = [
        ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
         "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
         "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
        ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
         "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
         "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
    ]

    @Test(arguments: 0..<3) func theRFC8032VectorsSignAndVerify(index: Int) {
        let (seed, publicKey, message, signature) = Self.vectors[index]
        #expect(Ed25519.publicKey(seed: Self.bytes(seed)) == Self.bytes(publicKey))
        #expect(Ed25519.sign(Self.bytes(message), seed: Self.bytes(seed)) == Self.bytes(signature))
        #expect(Ed25519.verify(Self.bytes(signature), of: Self.bytes(message), publicKey: Self.bytes(publicKey)))
        // One bit off, in the message or the signature: refused.
        var tampered = Self.bytes(signature)
        tampered[10] ^= 1
        #expect(!Ed25519.verify(tampered, of: Self.bytes(message), publicKey: Self.bytes(publicKey)))
        #expect(!Ed25519.verify(Self.bytes(signature), of: Self.bytes(message) + [0], publicKey: Self.bytes(publicKey)))
    }

    @Test func blake2b512MatchesRFC7693() {
        #expect(Ed25519.blake2b512(Array("abc".utf8)) == Self.bytes(
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"))
        #expect(Ed25519.sign([1], seed: [1, 2]) == nil)
    }
}
