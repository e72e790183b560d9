import Foundation
import Plugboard
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Testing

/// A host that requires signatures admits no byte unless a valid, unexpired
/// signed lock file covers it: real plugin files, real lock files and
/// signatures, real hosts. Each refusal has its own code.
@Suite struct SignedSetTests {
    /// A plugins directory holding Alpha and Beta, locked; a key pair whose
    /// public key file is trusted; a state directory shared by every host of the test.
    struct Fleet {
        let dir: TemporaryDirectory
        let state: TemporaryDirectory
        let key: SigningKey
        let lock: String
        var trustedKeys: String { dir.file("trusted.pub") }

        init() throws {
            let dir = try TemporaryDirectory()
            self.dir = dir
            state = try TemporaryDirectory()
            key = try #require(SigningKey.generate())
            let files = try [("Alpha", "fixture.alpha"), ("Beta", "fixture.beta")].map { name, id in
                (path: try dir.copy(Fixtures.library(name), as: "lib\(name).so"), id: id)
            }
            lock = LockFile.defaultPath(for: dir.path)
            try writeLockFile(lock, listing: files)
            try key.publicKey.text.write(toFile: trustedKeys, atomically: true, encoding: .utf8)
        }

        /// Signs the lock file as it is now.
        func sign(sequence: UInt64, expires: Date = Date().addingTimeInterval(86_400), channel: String = "stable", with signer: SigningKey? = nil) throws {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: lock)))
            let terms = LockSignature.Terms(sequence: sequence, expires: expires, channel: channel)
            let signature = try #require(LockSignature.sign(bytes, key: signer ?? key, terms: terms))
            try signature.text.write(toFile: lock + ".minisig", atomically: true, encoding: .utf8)
        }

        func configuration(required: Bool = true, channel: String? = nil, floor: UInt64? = 1) -> PluginHost.Configuration {
            var configuration = PluginHost.Configuration.with(pluginsDirectory: dir.path, cacheDirectory: state.path)
            configuration.trust.requiresSignatures = required
            configuration.trust.trustedKeyFiles = [trustedKeys]
            configuration.trust.lockChannel = channel
            configuration.trust.sequenceFloor = floor
            return configuration
        }

        /// Starts a host, loads everything, and hands over its records.
        func load(_ configuration: PluginHost.Configuration? = nil, _ body: (PluginHost, [PluginRecord]) throws -> Void = { _, _ in }) throws {
            try withHost(configuration ?? self.configuration()) { host in try body(host, try host.loadAll()) }
        }
    }

    /// Every plugin refused with `code`, and none of their bytes read or scanned.
    func expectRefused(_ fleet: Fleet, code: String, _ configuration: PluginHost.Configuration? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try fleet.load(configuration) { host, records in
            #expect(records.count == 2, sourceLocation: sourceLocation)
            #expect(records.allSatisfy { $0.code == code }, "\(records.map { "\($0.code ?? "-"): \($0.reason ?? "")" })", sourceLocation: sourceLocation)
            #expect(host.activePluginIDs.isEmpty, sourceLocation: sourceLocation)
            #expect(host.lastDiscovery.filesRead == 0 && host.lastDiscovery.filesScanned == 0, "no byte admitted", sourceLocation: sourceLocation)
        }
    }

    @Test func aSignedSetLoadsAndAReplayedOlderSetIsRefused() throws {
        let fleet = try Fleet()
        try fleet.sign(sequence: 5)
        try fleet.load { host, _ in
            #expect(host.activePluginIDs == ["fixture.alpha", "fixture.beta"])
            #expect(host.signedLock?.sequence == 5 && host.signedLock?.keyID == fleet.key.publicKey.idText)
            #expect(host.taint.isEmpty)
        }
        // The same set signed again with a lower number: a replay, also after a restart.
        try fleet.sign(sequence: 4)
        try expectRefused(fleet, code: "lock-rollback")
        // Rolling back is re-signing the older set with a higher number.
        try fleet.sign(sequence: 6)
        try fleet.load { host, _ in #expect(host.activePluginIDs.count == 2) }
    }

    @Test func aTamperedLockATamperedCommentAMissingSignatureAndAnUnknownKeyAreRefused() throws {
        let fleet = try Fleet()
        try expectRefused(fleet, code: "signature-missing")
        // The lock file changed after signing (an entry added by someone without the key).
        try fleet.sign(sequence: 1)
        let signed = try Data(contentsOf: URL(fileURLWithPath: fleet.lock))
        try Data(String(decoding: signed, as: UTF8.self).replacingOccurrences(of: "\"plugins\"", with: "\"plugins\" ").utf8)
            .write(to: URL(fileURLWithPath: fleet.lock))
        try expectRefused(fleet, code: "signature-invalid")
        try signed.write(to: URL(fileURLWithPath: fleet.lock))
        // The trusted comment changed after signing (its expiry pushed back).
        let signature = try String(contentsOfFile: fleet.lock + ".minisig", encoding: .utf8)
        try signature.replacingOccurrences(of: "channel:stable", with: "channel:stable2")
            .write(toFile: fleet.lock + ".minisig", atomically: true, encoding: .utf8)
        try expectRefused(fleet, code: "signature-invalid")
        // Signed by a key the host does not trust.
        try fleet.sign(sequence: 2, with: SigningKey.generate())
        try expectRefused(fleet, code: "key-unknown")
        // A trusted key file others can write trusts nobody.
        try fleet.sign(sequence: 3)
        chmod(fleet.trustedKeys, 0o666)
        try expectRefused(fleet, code: "key-unknown")
        chmod(fleet.trustedKeys, 0o644)
        try fleet.load { host, _ in #expect(host.activePluginIDs.count == 2) }
    }

    @Test func anExpiredSetAndAnotherChannelAreRefused() throws {
        let fleet = try Fleet()
        try fleet.sign(sequence: 1, expires: Date().addingTimeInterval(-60))
        try expectRefused(fleet, code: "lock-expired")
        try fleet.sign(sequence: 2, channel: "canary")
        try expectRefused(fleet, code: "lock-channel", fleet.configuration(channel: "stable"))
        try fleet.load(fleet.configuration(channel: "canary")) { host, _ in #expect(host.activePluginIDs.count == 2) }
    }

    @Test func aFileTheSignedLockDoesNotCoverIsRefusedAsBefore() throws {
        let fleet = try Fleet()
        try fleet.sign(sequence: 1)
        try patchBytes(at: fleet.dir.file("libBeta.so"), replacing: Array("echo from".utf8), with: Array("ECHO FROM".utf8))
        try fleet.load { host, records in
            #expect(records.first { $0.path.hasSuffix("libBeta.so") }?.code == "lock-hash-mismatch")
            #expect(host.activePluginIDs == ["fixture.alpha"])
        }
    }

    @Test func withSignaturesOnlyPreferredAnUnsignedSetLoadsAndTaintsTheHost() throws {
        let fleet = try Fleet()
        try fleet.load(fleet.configuration(required: false)) { host, _ in
            #expect(host.activePluginIDs.count == 2)
            #expect(host.taint.map(\.code) == ["unsigned-set"])
            #expect(host.taint.first?.reason.contains("signature-missing") == true)
            #expect(host.diagnostics.contains { $0.code == "host-tainted" })
        }
        try fleet.sign(sequence: 1)
        try fleet.load(fleet.configuration(required: false)) { host, _ in
            #expect(host.activePluginIDs.count == 2)
            #expect(host.taint.isEmpty && host.signedLock?.sequence == 1)
        }
    }

    /// A plugin admitted at discovery but started later (lazily, on its
    /// trigger) starts only if the lock file still vouches for it then.
    @Test func aPluginDiscoveredUnderASetThatNoLongerHoldsDoesNotStart() throws {
        let fleet = try Fleet()
        try fleet.sign(sequence: 1)
        let host = PluginHost(configuration: fleet.configuration())
        defer { host.shutdown() }
        host.declareDemoExtensionPoints()
        #expect(try host.discover().allSatisfy { $0.status == .available })
        #expect(host.signedLock?.sequence == 1)
        // The set expires (re-signed with a past expiry) before anything starts.
        try fleet.sign(sequence: 2, expires: Date().addingTimeInterval(-1))
        host.activateAll()
        #expect(host.activePluginIDs.isEmpty)
        #expect(host.records.allSatisfy { $0.code == "lock-expired" }, "\(host.records.map { $0.code ?? "-" })")
        #expect(host.signedLock == nil, "an expired set is not shown as the one in force")
    }

    /// The kept sequence number cannot be read, or cannot be written, where
    /// a set loads anyway (signatures preferred; an unwritable record):
    /// each said once as a warning with its code.
    @Test func aSequenceThatCannotBeKeptIsReported() throws {
        let fleet = try Fleet()
        try fleet.sign(sequence: 1)
        // Unwritable: the folder it lives in is taken by a file.
        try Data().write(to: URL(fileURLWithPath: fleet.state.file("signed-locks")))
        try fleet.load { host, _ in
            #expect(host.activePluginIDs.count == 2)
            #expect(host.diagnostics.contains { $0.code == "signed-lock-state-unwritable" }, "\(host.diagnostics)")
        }
        // Unreadable: the kept record is damaged.
        try FileManager.default.removeItem(atPath: fleet.state.file("signed-locks"))
        try fleet.load()
        let kept = try #require(try FileManager.default.contentsOfDirectory(atPath: fleet.state.file("signed-locks")).first)
        try Data("not json".utf8).write(to: URL(fileURLWithPath: fleet.state.file("signed-locks/\(kept)")))
        try fleet.load(fleet.configuration(required: false)) { host, _ in
            #expect(host.diagnostics.contains { $0.code == "signed-lock-state-unreadable" }, "\(host.diagnostics)")
        }
    }

    /// Where signatures are required, a missing record (the first use, or
    /// one deleted: they look the same) is never a silent reset: refused
    /// without a floor, accepted only down to it; an unreadable record is
    /// refused whatever the floor.
    @Test func aMissingOrUnreadableSequenceRecordIsNeverASilentReset() throws {
        let fleet = try Fleet()
        try fleet.sign(sequence: 5)
        try expectRefused(fleet, code: "lock-sequence-unknown", fleet.configuration(floor: nil))
        try expectRefused(fleet, code: "lock-rollback", fleet.configuration(floor: 6))
        try fleet.load(fleet.configuration(floor: 5)) { host, _ in #expect(host.activePluginIDs.count == 2) }
        // Recorded: an older set is refused whatever the floor.
        try fleet.sign(sequence: 4)
        try expectRefused(fleet, code: "lock-rollback", fleet.configuration(floor: 1))
        // The record deleted: the floor still refuses the replay.
        try FileManager.default.removeItem(atPath: fleet.state.file("signed-locks"))
        try expectRefused(fleet, code: "lock-sequence-unknown", fleet.configuration(floor: nil))
        try expectRefused(fleet, code: "lock-rollback", fleet.configuration(floor: 5))
        // The record damaged: refused, naming it, even with a floor the set passes.
        try fleet.sign(sequence: 7)
        try fleet.load(fleet.configuration(floor: 5)) { host, _ in #expect(host.activePluginIDs.count == 2) }
        let kept = try #require(try FileManager.default.contentsOfDirectory(atPath: fleet.state.file("signed-locks")).first)
        try Data("{".utf8).write(to: URL(fileURLWithPath: fleet.state.file("signed-locks/\(kept)")))
        try expectRefused(fleet, code: "lock-state-unreadable", fleet.configuration(floor: 1))
        try fleet.load(fleet.configuration(floor: 1)) { _, records in
            #expect(records.first?.reason?.contains(kept) == true, "\(records.first?.reason ?? "")")
        }
    }

    @Test func aRunningHostLearnsOfANewTrustedKeyWhenItsFileChanges() throws {
        let fleet = try Fleet()
        let next = try #require(SigningKey.generate())
        try fleet.sign(sequence: 1, with: next)
        let host = PluginHost(configuration: fleet.configuration())
        defer { host.shutdown() }
        host.declareDemoExtensionPoints()
        #expect(try host.start().allSatisfy { $0.code == "key-unknown" })
        // Rotation: the new key joins the trusted list (replaced by a rename).
        try (fleet.key.publicKey.text + next.publicKey.text).write(toFile: fleet.trustedKeys, atomically: true, encoding: .utf8)
        _ = try host.refresh()
        host.activateAll()
        #expect(host.activePluginIDs == ["fixture.alpha", "fixture.beta"])
        #expect(host.signedLock?.keyID == next.publicKey.idText)
    }

    /// A host can sandbox every plugin it did not sign itself: a set signed
    /// with one of its own keys runs as `others` says, the same set signed
    /// with another trusted key (a vendor's) as `unsigned` says.
    @Test func pluginsTheHostDidNotSignItselfRunAsUnsignedSays() throws {
        let fleet = try Fleet()
        let vendor = try #require(SigningKey.generate())
        let vendorKey = fleet.state.file("vendor.pub")
        try vendor.publicKey.text.write(toFile: vendorKey, atomically: true, encoding: .utf8)
        var configuration = fleet.configuration()
        configuration.trust.trustedKeyFiles = [fleet.trustedKeys, vendorKey]
        configuration.trust.ownKeyFiles = [fleet.trustedKeys]
        configuration.isolation.unsigned = .sandboxed
        func modes() throws -> [String?] {
            var modes: [String?] = []
            try withHost(configuration) { host in modes = try host.discover().map { $0.isolation?.mode } }
            return modes
        }
        try fleet.sign(sequence: 1)
        #expect(try modes() == ["in-process", "in-process"])
        try fleet.sign(sequence: 2, with: vendor)
        #expect(try modes() == ["sandboxed", "sandboxed"])
    }
}

/// minisign's own files: a key pair and a signature made by the real tool
/// (test data published with SerenityOS's LibCrypto minisign tests, made by
/// minisign 0.12), read and checked by Plugboard.
@Suite struct MinisignCompatibilityTests {
    static let publicKey = "RWRaxH7X/Uvk/etgLk05NOsAT5aNTz1d5DjHD2R3s1/URq3vnQw6R790"
    /// `minisign -G -W` (no password).
    static let secretKey = """
        untrusted comment: minisign encrypted secret key
        RWQAAEIyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWsR+1/1L5P3AKeEZBVWCT2g7hvHFeF8ALiRqPDSZdINZiB1uSVxyaetgLk05NOsAT5aNTz1d5DjHD2R3s1/URq3vnQw6R790AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=

        """
    /// `minisign -S` of the 8 bytes "1234abc\n".
    static let signature = """
        untrusted comment: signature from minisign secret key
        RURaxH7X/Uvk/Q81zoW4nzVrc1gVOQF5PZwD9vxF7TEI6lYC1qvXP4oyPcBiF0QtMDzJZvMj3/M+rm1S0nhxQA0pNtVL3VNFJAg=
        trusted comment: timestamp:1745588000\tfile:1234abc\thashed
        bRVIYO+dSrQwLhTY6/kk/0qyIb7xrzPA7qq9RPIpOYBo9hnhL0L/IW5WLSiqaA9tSY+PjYjLJQ8GFqFfZyi4AA==

        """

    @Test func aSignatureMadeByMinisignVerifies() throws {
        let key = try #require(PublicSigningKey(text: Self.publicKey))
        #expect(key.idText == "FDE44BFDD77EC45A")
        let signature = try #require(LockSignature(text: Self.signature))
        #expect(signature.verifySignatures(Array("1234abc\n".utf8), trustedKeys: [key]) == .success(key))
        #expect(signature.verifySignatures(Array("1234abd\n".utf8), trustedKeys: [key]).failureCode == "signature-invalid")
        // Its comment states no sequence: minisign's default comment is not a Plugboard set's.
        #expect(signature.verify(Array("1234abc\n".utf8), trustedKeys: [key]).failureCode == "signature-invalid")
    }

    @Test func minisignsOwnSecretKeySignsALockFile() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write(Data(Self.secretKey.utf8), as: "minisign.key")
        chmod(path, 0o600)
        let key = try SigningKey.load(path)
        #expect(key.publicKey == PublicSigningKey(text: Self.publicKey))
        let lock = Array(#"{"lockVersion": 2, "plugins": []}"#.utf8)
        let terms = LockSignature.Terms(sequence: 1, expires: Date(timeIntervalSince1970: 1_900_000_000), channel: "stable")
        let signed = try #require(LockSignature.sign(lock, key: key, terms: terms))
        #expect(signed.verify(lock, trustedKeys: [key.publicKey]) == .success(terms))
        // A damaged key (its public half changed) is refused, not used.
        var bytes = try #require(Data(base64Encoded: String(Self.secretKey.split(separator: "\n")[1])).map([UInt8].init))
        bytes[100] ^= 1
        let damaged = try dir.write(Data(("untrusted comment: x\n" + Data(bytes).base64EncodedString() + "\n").utf8), as: "damaged.key")
        chmod(damaged, 0o600)
        #expect(throws: SigningKey.FileError.self) { try SigningKey.load(damaged) }
        // A password-protected key (key derivation "Sc"): refused, saying how to sign instead.
        bytes[100] ^= 1
        bytes[2] = UInt8(ascii: "S")
        bytes[3] = UInt8(ascii: "c")
        let encrypted = try dir.write(Data(("untrusted comment: x\n" + Data(bytes).base64EncodedString() + "\n").utf8), as: "encrypted.key")
        chmod(encrypted, 0o600)
        #expect { try SigningKey.load(encrypted) } throws: { error in
            (error as? SigningKey.FileError)?.description.contains("password-protected minisign key") == true
        }
    }
}
