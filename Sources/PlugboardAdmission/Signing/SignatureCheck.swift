import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// What a host asks of its lock file's signature (`FILE.minisig`) before
/// any of the lock file's hashes count: ``PluginHost/Configuration/Trust/requiresSignatures``,
/// ``PluginHost/Configuration/Trust/trustedKeyFiles`` and
/// ``PluginHost/Configuration/Trust/lockChannel``, fixed when the host is made.
package struct SignatureCheck: Sendable {
    let trustedKeyFiles: [String]
    /// Refuse every file unless the signature holds; otherwise (keys given,
    /// signatures only preferred) load by the hashes and taint the host.
    let isRequired: Bool
    let channel: String?
    let checksOwnership: Bool
    let sequences: AcceptedSequences
    /// The lowest sequence accepted with no record (``PluginHost/Configuration/Trust/sequenceFloor``).
    var floor: UInt64? = nil

    package init(trustedKeyFiles: [String], isRequired: Bool, channel: String? = nil, checksOwnership: Bool, sequences: AcceptedSequences, floor: UInt64? = nil) {
        self.trustedKeyFiles = trustedKeyFiles
        self.isRequired = isRequired
        self.channel = channel
        self.checksOwnership = checksOwnership
        self.sequences = sequences
        self.floor = floor
    }

    /// The checks of a host whose signatures are required, for the fleet
    /// commands, which install sets for such hosts: the same records of
    /// accepted sequences as a host given `records`
    /// (``PluginHost/Configuration/Trust/sequenceRecords``), else `cache` as
    /// its state directory (``PluginHost/Configuration/Paths/cache``); and
    /// that state directory. Why not, when the records could not be kept.
    package static func required(trustedKeyFiles: [String], channel: String?, floor: UInt64?, cache: String?, records: String? = nil,
                                 checksOwnership: Bool = true) -> Result<(check: SignatureCheck, stateDirectory: String), KeyFileProblem> {
        var untrusted: String?
        let state = StateDirectory(configured: cache, checksOwnership: checksOwnership) { untrusted = $0.message }
        let sequences: AcceptedSequences
        if let records {
            let told = Mutex<String?>(nil)
            sequences = AcceptedSequences(folder: records, checksOwnership: checksOwnership) { diagnostic in told.withLock { $0 = diagnostic.message } }
            guard sequences.isPersistent else { return .failure(KeyFileProblem(told.withLock { $0 } ?? "\(records): not trusted")) }
        } else {
            guard state.isTrusted else { return .failure(KeyFileProblem(untrusted ?? "\(state.path): not trusted as a state directory")) }
            sequences = AcceptedSequences(stateDirectory: state.path, isUsable: true)
        }
        let check = SignatureCheck(trustedKeyFiles: trustedKeyFiles, isRequired: true, channel: channel, checksOwnership: checksOwnership,
                                   sequences: sequences, floor: floor)
        return .success((check, state.path))
    }

    /// The same checks but for the sequence, which any set passes
    /// (`plugboard rollback --lower-sequence` checking the older set).
    package func ignoringRecord() -> SignatureCheck {
        var check = SignatureCheck(trustedKeyFiles: trustedKeyFiles, isRequired: isRequired, channel: channel, checksOwnership: checksOwnership,
                                   sequences: AcceptedSequences(stateDirectory: "", isUsable: false), floor: 0)
        check.floor = 0
        return check
    }

    /// The last set accepted for `lockFile`, if a record is kept and readable.
    package func lastAccepted(for lockFile: String) -> (sequence: UInt64, accepted: Date, lockSHA256: String?)? {
        sequences.last(for: lockFile).map { ($0.sequence, $0.accepted, $0.lockSHA256) }
    }

    /// Lowers the record of `lockFile` to `signed` (`plugboard rollback
    /// --lower-sequence`: the operator's explicit choice, never `follow`'s).
    package func lowerRecord(to signed: SignedLock, lockFile: String, lockSHA256: String?, now: Date = Date()) -> String? {
        sequences.replace(.init(lockFile: lockFile, sequence: signed.sequence, channel: signed.channel, keyID: signed.keyID, accepted: now, lockSHA256: lockSHA256))
    }

    /// The signature file of a lock file.
    static func signaturePath(of lockFile: String) -> String { lockFile + ".minisig" }

    /// The files whose change means reading again: the signature and the key files.
    var watchedFiles: [String] { trustedKeyFiles }

    /// Checks, in order: a trusted key made the signature, the signature of
    /// `lock` (the lock file's bytes, read once), the trusted comment's
    /// signature, the expiry, the sequence number against the last accepted,
    /// the channel. The accepted set's terms, remembered, when all hold.
    func verify(_ lock: [UInt8], lockFile: String, now: Date = Date()) -> Result<SignedLock, PluginLoadError> {
        let signatureFile = Self.signaturePath(of: lockFile)
        guard let text = try? String(contentsOfFile: signatureFile, encoding: .utf8) else {
            return .failure(.signature(.signatureMissing, path: signatureFile, reason: "the lock file \(lockFile) has no signature; sign it with `plugboard lock --sign KEYFILE` (or minisign, docs/operations.md) and install both"))
        }
        let verified = verify(lock, signature: text, signatureFile: signatureFile, recordedAs: lockFile, now: now)
        if case let .success(signed) = verified { accept(signed, lockFile: lockFile, lockSHA256: SHA256.hex(lock), now: now) }
        return verified
    }

    /// The same checks on a set not yet installed (`plugboard pull`): `lock`
    /// and `signature` as fetched, the sequence compared with the record of
    /// `lockFile`, where the set is to be installed; nothing is recorded.
    package func verify(_ lock: [UInt8], signature text: String, signatureFile: String, recordedAs lockFile: String, now: Date = Date()) -> Result<SignedLock, PluginLoadError> {
        func refuse(_ code: PluginLoadError.Code, _ reason: String) -> Result<SignedLock, PluginLoadError> {
            .failure(.signature(code, path: signatureFile, reason: reason))
        }
        guard let signature = LockSignature(text: text) else {
            return refuse(.signatureInvalid, "not a minisign signature; sign the lock file again with `plugboard lock --sign KEYFILE`")
        }
        var keys: [PublicSigningKey] = []
        for file in trustedKeyFiles {
            switch Self.keys(in: file, checksOwnership: checksOwnership) {
            case let .success(found): keys += found
            case let .failure(problem): return refuse(.keyUnknown, "no key is trusted: the trusted key file \(file) \(problem)")
            }
        }
        let terms: LockSignature.Terms
        switch signature.verify(lock, trustedKeys: keys) {
        case let .success(verified): terms = verified
        case let .failure(failure): return refuse(PluginLoadError.Code(failure.code), failure.reason)
        }
        if let problem = expiryProblem(terms.expires, now: now) { return refuse(.lockExpired, problem) }
        if let problem = sequenceProblem(terms.sequence, lockFile: lockFile) { return refuse(problem.code, problem.reason) }
        if let channel, terms.channel != channel {
            return refuse(.lockChannel, "signed for channel \(terms.channel), this host follows \(channel); install a set signed for \(channel)")
        }
        return .success(SignedLock(keyID: PublicSigningKey.idText(signature.keyID), sequence: terms.sequence, expires: terms.expires, channel: terms.channel))
    }

    /// Remembers `signed` as the last set accepted for `lockFile` (only ever
    /// upwards); why the record could not be written, when not.
    @discardableResult
    package func accept(_ signed: SignedLock, lockFile: String, lockSHA256: String?, now: Date = Date()) -> String? {
        sequences.record(.init(lockFile: lockFile, sequence: signed.sequence, channel: signed.channel, keyID: signed.keyID, accepted: now, lockSHA256: lockSHA256))
    }

    /// The record of `lockFile` as it is, to put back with ``restoreRecord(_:lockFile:)``.
    package struct SavedRecord: Sendable { fileprivate let accepted: AcceptedSequences.Accepted? }

    package func saveRecord(for lockFile: String) -> SavedRecord {
        if case let .accepted(accepted) = sequences.record(for: lockFile) { return SavedRecord(accepted: accepted) }
        return SavedRecord(accepted: nil)
    }

    package func restoreRecord(_ saved: SavedRecord, lockFile: String) {
        sequences.restore(saved.accepted, lockFile: lockFile)
    }

    /// Why `sequence` is not accepted: lower than the last accepted; or,
    /// where signatures are required, no record to compare with and no
    /// floor (or one above it), or a record that cannot be read. Where they
    /// are only preferred, a missing or unreadable record lets it pass (a
    /// warning for the unreadable one), as any failed check there does.
    private func sequenceProblem(_ sequence: UInt64, lockFile: String) -> (code: PluginLoadError.Code, reason: String)? {
        let fix = "set the lowest sequence you accept as the floor (PluginHost.Configuration.trust.sequenceFloor, --sequence-floor N)"
        switch sequences.record(for: lockFile, warn: !isRequired) {
        case let .accepted(last):
            guard sequence < last.sequence else { return nil }
            return (.lockRollback, "sequence \(sequence) is lower than \(last.sequence), accepted on \(UTCTimestamp.string(from: last.accepted)): an older set replayed; install the newest signed set, or to roll back re-sign the older set with a sequence above \(last.sequence)")
        case let .missing(file):
            guard isRequired else { return nil }
            guard let floor else {
                return (.lockSequenceUnknown, "no sequence of \(lockFile) was accepted before\(file.map { " (no record \($0))" } ?? " by this process (its state directory is not trusted, so nothing is kept)"), so an older set replayed would look the same as this one (\(sequence)); \(fix)")
            }
            guard sequence >= floor else {
                return (.lockRollback, "sequence \(sequence) is below the floor \(floor) and no higher one was recorded: an older set replayed; install the newest signed set")
            }
            return nil
        case let .unreadable(file):
            guard isRequired else { return nil }
            return (.lockStateUnreadable, "\(file): the last accepted sequence of \(lockFile) cannot be read, so an older set replayed could not be refused; restore the file, or remove it and \(fix)")
        }
    }

    /// Why `terms` no longer vouch at `now`.
    func expiryProblem(_ expires: Date, now: Date = Date()) -> String? {
        guard expires <= now else { return nil }
        return "the signature expired on \(UTCTimestamp.string(from: expires)); the publisher must sign the set again (`plugboard lock --sign KEYFILE --expires-days N`)"
    }

    /// The public keys of a trusted key file (minisign's format; several may
    /// follow one another); why none can be used otherwise.
    package static func keys(in file: String, checksOwnership: Bool) -> Result<[PublicSigningKey], KeyFileProblem> {
        // A key file others can write would let them trust their own key.
        var ownership = OwnershipCheck()
        if checksOwnership, access(file, F_OK) == 0, let problem = ownership.problem(file: file) { return .failure(KeyFileProblem(problem.reason)) }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            return .failure(KeyFileProblem("cannot be read; check the path (PluginHost.Configuration.trust.trustedKeyFiles, --trusted-key)"))
        }
        let keys = PublicSigningKey.all(in: text)
        return keys.isEmpty ? .failure(KeyFileProblem("holds no minisign public key (the `.pub` file `plugboard keygen` or `minisign -G` writes)")) : .success(keys)
    }

    /// Why a trusted key file gives no key.
    package struct KeyFileProblem: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }
}

