import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// A lock file in force: where it is and what reading it gave. Read when the
/// host is made, and again when it, its signature or a trusted key file
/// changed since (`plugboard install` updates it under a running host). An
/// unreadable, untrusted or (when signatures are required) unsigned one
/// refuses every file.
package final class LockPolicy: Sendable {
    /// nil when signatures are required but no lock file is configured.
    let path: String?
    private let checksOwnership: Bool
    private let signatures: SignatureCheck?
    /// Marks the host when a file is admitted under a set whose signature
    /// did not hold (signatures only preferred).
    private let taint: HostTaint?

    /// What one read gave.
    private struct Reading {
        var identities: [FileIdentity?]
        var file: Result<LockFile, PluginLoadError>
        /// Who signed it, when its signature held.
        var signed: SignedLock?
        /// Why its signature did not hold, when signatures are only preferred.
        var unverified: PluginLoadError?
    }

    private let read: Mutex<Reading>

    package init(path: String?, checksOwnership: Bool, signatures: SignatureCheck? = nil, taint: HostTaint? = nil) {
        self.path = path
        self.checksOwnership = checksOwnership
        self.signatures = signatures
        self.taint = taint
        read = Mutex(Reading(identities: [], file: .failure(.signature(.signatureMissing, path: "", reason: ""))))
        read.withLock { $0 = self.load() }
    }

    private var watchedFiles: [String] {
        guard let path else { return [] }
        return [path] + (signatures.map { [SignatureCheck.signaturePath(of: path)] + $0.watchedFiles } ?? [])
    }

    /// The lock file as it is now: read again when a file it depends on
    /// changed; refused once a signature it was accepted by has expired.
    var file: Result<LockFile, PluginLoadError> { current.file }

    private var current: Reading {
        let now = watchedFiles.map { FileIdentity.of(path: $0) }
        var reading = read.withLock { read in
            if read.identities != now { read = load() }
            return read
        }
        if let signed = reading.signed, let signatures, let path, let problem = signatures.expiryProblem(signed.expires) {
            let expired = PluginLoadError.signature(.lockExpired, path: SignatureCheck.signaturePath(of: path), reason: problem)
            if signatures.isRequired { reading.file = .failure(expired) } else { reading.unverified = expired }
        }
        return reading
    }

    /// Who signed the lock file in force, while its signature holds (not
    /// once it expired, or the files it depends on changed and no longer do).
    package var signedLock: SignedLock? {
        let reading = current
        guard case .success = reading.file, reading.unverified == nil else { return nil }
        return reading.signed
    }

    private func load() -> Reading {
        let identities = watchedFiles.map { FileIdentity.of(path: $0) }
        guard let path else {
            return Reading(identities: identities, file: .failure(.signature(.signatureMissing, path: "plugboard.lock",
                reason: "signatures are required but no lock file is configured; set PluginHost.Configuration.trust.lockFile or pluginsDirectory, and install the signed lock file beside the plugins")))
        }
        // A lock file others can write would let them approve their own files.
        // (A missing one is reported below, with how to write it.)
        var ownership = OwnershipCheck()
        if checksOwnership, access(path, F_OK) == 0, let problem = ownership.problem(file: path) {
            return Reading(identities: identities, file: .failure(.lockFileInvalid(path: path, reason: problem.reason)))
        }
        // One read: the bytes the signature covers are the bytes parsed.
        guard let data = FileManager.default.contents(atPath: path) else {
            return Reading(identities: identities, file: .failure(.lockFileInvalid(
                path: path, reason: "cannot read it; write it with `plugboard lock --plugins DIR`")))
        }
        var reading = Reading(identities: identities, file: .failure(.lockFileInvalid(path: path, reason: "")))
        if let signatures {
            switch signatures.verify([UInt8](data), lockFile: path) {
            case let .success(signed): reading.signed = signed
            case let .failure(error):
                guard !signatures.isRequired else {
                    reading.file = .failure(error)
                    return reading
                }
                reading.unverified = error
            }
        }
        reading.file = Result { () throws(PluginLoadError) in try LockFile.decode(data, path: path) }
        return reading
    }

    /// Why `file` may not be loaded whatever its bytes: the lock file is
    /// unusable or unsigned, or does not list it. Asked before the file is read.
    func listingProblem(_ file: String, kind: Admission.Kind) -> PluginLoadError? {
        listingProblem(file, kind: kind, in: self.file)
    }

    private func listingProblem(_ file: String, kind: Admission.Kind, in lockFile: Result<LockFile, PluginLoadError>) -> PluginLoadError? {
        switch lockFile {
        case let .failure(error): return error
        case let .success(lock):
            let name = LockFile.fileName(file)
            let listed = switch kind {
            case .plugin: lock.plugins.contains { $0.file == name }
            case .interfaceLibrary: lock.libraries.contains { $0.file == name }
            }
            return listed ? nil : .notLocked(path: file, lockFile: path ?? "")
        }
    }

    /// The entry recorded for `file` when `sha256` (of the bytes read) is the
    /// recorded one; an interface library has no id, so no entry.
    func entry(for file: String, sha256: String, kind: Admission.Kind) -> Result<LockFile.Entry?, PluginLoadError> {
        // One read for both questions: listed, and with these bytes.
        let reading = current
        if let problem = listingProblem(file, kind: kind, in: reading.file) { return .failure(problem) }
        guard case let .success(lock) = reading.file else { return .success(nil) }
        let name = LockFile.fileName(file)
        let expected: String
        let entry: LockFile.Entry?
        switch kind {
        case .plugin:
            entry = lock.plugins.first { $0.file == name }
            expected = entry?.sha256 ?? ""
        case .interfaceLibrary:
            entry = nil
            expected = lock.libraries.first { $0.file == name }?.sha256 ?? ""
        }
        guard sha256 == expected else {
            return .failure(.lockMismatch(path: file, expected: expected, found: sha256, lockFile: path ?? ""))
        }
        if let unverified = reading.unverified {
            taint?.mark(HostTaint.unsignedSet, "\(file) was admitted under a lock file whose signature did not hold "
                + "[\(unverified.code)]: \(unverified.reason) (signatures are only preferred; require them with "
                + "PluginHost.Configuration.trust.requiresSignatures or --require-signatures)")
        }
        return .success(entry)
    }
}
