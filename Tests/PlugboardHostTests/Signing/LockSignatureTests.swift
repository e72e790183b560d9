import Foundation
import PlugboardHost
import Testing

/// Lock-file signatures in minisign's format: made, verified, and refused
/// when the lock, the comment or the key is not the one signed.
@Suite struct LockSignatureTests {
    let lock = Array(#"{"lockVersion": 2, "plugins": []}"#.utf8)
    let terms = LockSignature.Terms(sequence: 7, expires: Date(timeIntervalSince1970: 1_900_000_000), channel: "stable")

    @Test func aSignatureVerifiesAndNamesItsTerms() throws {
        let key = try #require(SigningKey.generate())
        let signed = try #require(LockSignature.sign(lock, key: key, terms: terms))
        let parsed = try #require(LockSignature(text: signed.text))
        #expect(parsed == signed)
        #expect(parsed.verify(lock, trustedKeys: [key.publicKey]) == .success(terms))
        // minisign's layout: 4 lines, a 74-byte "ED" block, a 64-byte global signature.
        let lines = signed.text.split(separator: "\n")
        #expect(lines.count == 4 && lines[2].hasPrefix("trusted comment: sequence:7 expires:2030-03-17T17:46:40Z channel:stable"))
        #expect(Data(base64Encoded: String(lines[1]))?.prefix(2) == Data("ED".utf8))
    }

    @Test func aTamperedLockATamperedCommentAndAnUnknownKeyAreRefused() throws {
        let key = try #require(SigningKey.generate()), other = try #require(SigningKey.generate())
        let signed = try #require(LockSignature.sign(lock, key: key, terms: terms))
        var changed = lock
        changed[3] ^= 1
        #expect(signed.verify(changed, trustedKeys: [key.publicKey]).failureCode == "signature-invalid")
        let rewritten = try #require(LockSignature(text: signed.text.replacingOccurrences(of: "sequence:7", with: "sequence:9")))
        #expect(rewritten.verify(lock, trustedKeys: [key.publicKey]).failureCode == "signature-invalid")
        #expect(signed.verify(lock, trustedKeys: [other.publicKey]).failureCode == "key-unknown")
        #expect(LockSignature(text: "not a signature") == nil)
    }

    @Test func keysRoundTripAndASecretKeyOthersCanReadIsRefused() throws {
        let dir = try TemporaryDirectory()
        let key = try #require(SigningKey.generate())
        try key.write(to: dir.file("release.key"))
        let loaded = try SigningKey.load(dir.file("release.key"))
        #expect(loaded.publicKey == key.publicKey)
        let publicText = try String(contentsOfFile: dir.file("release.key.pub"), encoding: .utf8)
        #expect(PublicSigningKey(text: publicText) == key.publicKey)
        #expect(publicText.hasPrefix("untrusted comment: minisign public key \(key.publicKey.idText)"))
        // A key file saved with CRLF line ends ("\r\n" is one Character) reads the same.
        let crlf = publicText.replacing("\n", with: "\r\n")
        #expect(PublicSigningKey(text: crlf) == key.publicKey)
        #expect(PublicSigningKey.all(in: crlf + crlf) == [key.publicKey, key.publicKey])
        // Never over an existing file; refused once others can read it.
        #expect(throws: SigningKey.FileError.self) { try key.write(to: dir.file("release.key")) }
        chmod(dir.file("release.key"), 0o644)
        #expect(throws: SigningKey.FileError.self) { try SigningKey.load(dir.file("release.key")) }
    }
}

extension Result where Failure == LockSignature.Failure {
    var failureCode: String? {
        if case let .failure(failure) = self { return failure.code }
        return nil
    }
}

/// `plugboard keygen` and `plugboard lock --sign`.
@Suite struct SigningCLITests {
    /// A plugins folder holding Alpha, and a key pair from `plugboard keygen`.
    static func pluginsAndKey() throws -> (TemporaryDirectory, String) {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try dir.copy(Fixtures.library("Alpha"), as: "plugins/alpha.so")
        let key = dir.file("release.key")
        #expect(try runProcess(Fixtures.executable("plugboard"), ["keygen", key]).status == 0)
        return (dir, key)
    }

    @Test func keygenThenLockSignWritesASignatureTheKeyVerifies() throws {
        let (dir, key) = try Self.pluginsAndKey()
        let mode = (try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600)
        #expect(try runProcess(Fixtures.executable("plugboard"), ["keygen", key]).status == 1)  // never over a key
        let options = ["--plugins", dir.file("plugins"), "--cache", dir.file("cache")]
        for _ in 0..<2 {
            let signed = try runProcess(Fixtures.executable("plugboard"), ["lock", "--sign", key, "--channel", "canary"] + options)
            #expect(signed.status == 0, "\(signed.stderr)")
        }
        let publicKey = try #require(PublicSigningKey(text: try String(contentsOfFile: key + ".pub", encoding: .utf8)))
        let signature = try #require(LockSignature(text: try String(contentsOfFile: dir.file("plugins/plugboard.lock.minisig"), encoding: .utf8)))
        let lock = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir.file("plugins/plugboard.lock"))))
        let terms = try signature.verify(lock, trustedKeys: [publicKey]).get()
        #expect(terms.sequence == 2)  // one more than the signature it replaced
        #expect(terms.channel == "canary")
        #expect(terms.expires > Date().addingTimeInterval(29 * 86_400))
        // A key others can read: refused, and the lock file is left as it was.
        chmod(key, 0o644)
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.file("plugins/plugboard.lock")))
        let refused = try runProcess(Fixtures.executable("plugboard"), ["lock", "--sign", key] + options)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("can be read or written by others"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("plugins/plugboard.lock"))) == before)
    }

    @Test func aHostRequiringSignaturesListsTheSignedSetAndInstallLeavesASignedLockAlone() throws {
        let (dir, key) = try Self.pluginsAndKey()
        let options = ["--plugins", dir.file("plugins"), "--cache", dir.file("cache")]
        let required = ["--require-signatures", "--trusted-key", key + ".pub", "--sequence-floor", "1", "--json"]
        // Required without a key to trust: a usage error, not a host that refuses everything.
        let keyless = try runProcess(Fixtures.executable("plugboard"), ["list", "--require-signatures"] + options)
        #expect(keyless.status == 64)
        #expect(keyless.stderr.contains("--trusted-key"), "\(keyless.stderr)")
        let badFloor = try runProcess(Fixtures.executable("plugboard"), ["list", "--sequence-floor", "many"] + options)
        #expect(badFloor.status == 64 && badFloor.stderr.contains("'--sequence-floor' takes a sequence number"), "\(badFloor.stderr)")
        // Unsigned: refused with its code.
        #expect(try runProcess(Fixtures.executable("plugboard"), ["lock"] + options).status == 0)
        let unsigned = try runProcess(Fixtures.executable("plugboard"), ["list"] + options + required)
        #expect(unsigned.stdout.contains("\"code\" : \"signature-missing\""), "\(unsigned.stdout)")
        // Signed: listed with its terms.
        #expect(try runProcess(Fixtures.executable("plugboard"), ["lock", "--sign", key, "--sequence", "7"] + options).status == 0)
        // No sequence accepted yet and no floor: the first use looks like a replay.
        let floorless = try runProcess(Fixtures.executable("plugboard"), ["list"] + options + ["--require-signatures", "--trusted-key", key + ".pub", "--json"])
        #expect(floorless.stdout.contains("\"code\" : \"lock-sequence-unknown\""), "\(floorless.stdout)")
        let signed = try runProcess(Fixtures.executable("plugboard"), ["list"] + options + required)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(signed.stdout.utf8)) as? [String: Any])
        #expect((object["signedLock"] as? [String: Any])?["sequence"] as? Int == 7, "\(signed.stdout)")
        #expect((object["plugins"] as? [[String: Any]])?.first?["status"] as? String == "available", "\(signed.stdout)")
        let text = try runProcess(Fixtures.executable("plugboard"), ["list"] + options + ["--require-signatures", "--trusted-key", key + ".pub"])
        #expect(text.stdout.contains("Signed set: sequence 7, channel stable"), "\(text.stdout)")
        // install would void the publisher's signature: refused, nothing touched.
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.file("plugins/plugboard.lock")))
        let install = try runProcess(Fixtures.executable("plugboard"), ["install", Fixtures.library("Beta").path] + options)
        #expect(install.status == 1)
        #expect(install.stderr.contains("is signed"), "\(install.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("plugins/plugboard.lock"))) == before)
        #expect(!FileManager.default.fileExists(atPath: dir.file("plugins/libBeta.so")))
    }
}
