import CPlugboardFleet
import FoundationEssentials
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// Installs a whole set into a plugins directory in one switch. The set is
/// staged in a folder beside the directory (same file system), checked
/// there (the signature as a host requiring signatures checks it, every
/// file against the lock file), and then exchanged with the directory in
/// one `renameat2(RENAME_EXCHANGE)`: a host sees the old set or the new,
/// never a mix, and a kill at any point leaves one of them whole (a
/// leftover staging folder is removed by the next install). The set it
/// replaced is kept beside it for `plugboard rollback`.
package struct SetInstaller {
    /// The plugins directory, absolute.
    package let directory: String
    package let signatures: SignatureCheck

    package init(directory: String, signatures: SignatureCheck) {
        // Links and `..` resolved: the record's name is the same before the
        // first install and after, and a linked DIR is switched where it points.
        self.directory = PluginDirectory.resolvedPath(directory)
        self.signatures = signatures
    }

    private var parent: String { String(directory.split(separator: "/").dropLast().joined(separator: "/")).withLeadingSlash }
    private var name: String { String(directory.split(separator: "/").last ?? "plugins") }
    /// The set before the last install.
    package var previous: String { "\(parent)/.\(name).previous" }
    package var lockFile: String { directory + "/" + SetFiles.lockName }

    /// Runs `body` holding the install lock of the directory: one install
    /// or rollback at a time.
    package func withInstallLock<T>(_ body: () throws(FleetError) -> T) throws(FleetError) -> T {
        let lockPath = "\(parent)/.\(name).install-lock"
        // A first install may name a folder whose parent is new too.
        try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw FleetError(.installFailed, lockPath, reason: "cannot create the install lock: \(String(cString: strerror(errno)))", fix: "make \(parent) writable by this user")
        }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        return try body()
    }

    /// Runs `body` holding the install lock, with a fresh, empty staging folder.
    package func withStaging<T>(_ body: (String) throws(FleetError) -> T) throws(FleetError) -> T {
        try withInstallLock { () throws(FleetError) -> T in
            // Held: whatever staging folder is left was a killed install's.
            if let names = try? FileManager.default.contentsOfDirectory(atPath: parent) {
                for leftover in names where leftover.hasPrefix(".\(name).staging-") || leftover.hasPrefix(".\(name).previous.old-") {
                    try? FileManager.default.removeItem(atPath: "\(parent)/\(leftover)")
                }
            }
            let staging = "\(parent)/.\(name).staging-\(getpid())"
            guard mkdir(staging, 0o755) == 0 else {
                throw FleetError(.installFailed, staging, reason: "cannot create the staging folder: \(String(cString: strerror(errno)))", fix: "make \(parent) writable by this user and free space there")
            }
            defer { try? FileManager.default.removeItem(atPath: staging) }
            return try body(staging)
        }
    }

    /// The signature of `lock` (trusted key, expiry, sequence against the
    /// record of the directory's lock file, channel), then the lock file
    /// read: the signed lock and the files it lists (title → SHA-256 hex).
    package func admit(_ lock: [UInt8], signature: String) throws(FleetError) -> (signed: SignedLock, files: [String: String]) {
        let signed: SignedLock
        switch signatures.verify(lock, signature: signature, signatureFile: SetFiles.signatureName, recordedAs: lockFile) {
        case let .success(verified): signed = verified
        case let .failure(error): throw FleetError(error)
        }
        // The recorded sequence again with another lock file: a reuse. The
        // same lock file (an install interrupted after its record) is not.
        let installed = FileManager.default.contents(atPath: lockFile).map(Array.init)
        if let last = signatures.lastAccepted(for: lockFile), last.sequence == signed.sequence,
           last.lockSHA256.map({ $0 != SHA256.hex(lock) }) ?? (installed != lock) {
            throw FleetError(.sequenceReused, SetFiles.signatureName,
                reason: "signed with sequence \(signed.sequence), the sequence of the set accepted on \(UTCTimestamp.string(from: last.accepted)), but its lock file differs",
                fix: "a publisher signs each new set with a higher sequence; sign it again (`plugboard lock --plugins DIR --sign KEYFILE`); nothing was installed")
        }
        let parsed: LockFile
        do { parsed = try LockFile.decode(Data(lock), path: SetFiles.lockName) } catch {
            throw FleetError(.setMismatch, SetFiles.lockName, reason: error.reason, fix: "publish the set again; nothing was installed")
        }
        return (signed, SetFiles.listing(of: parsed))
    }

    /// What checking a staged set found.
    package enum Verdict {
        /// A newer set (or the first): to be switched in.
        case install(SignedLock)
        /// The same lock file as installed: nothing to do.
        case unchanged(SignedLock)
    }

    /// Checks the set staged in `staging` before anything of it lands in the
    /// directory: ``admit(_:signature:)`` on its lock file, then every file
    /// (`files`: each title with the SHA-256 its bytes were checked to have)
    /// against the lock file.
    package func verify(staging: String, files: [(title: String, sha256: String)]) throws(FleetError) -> Verdict {
        guard let lock = FileManager.default.contents(atPath: staging + "/" + SetFiles.lockName).map(Array.init),
              let signature = try? String(contentsOfFile: staging + "/" + SetFiles.signatureName, encoding: .utf8) else {
            throw FleetError(.setUnsigned, directory, reason: "the set has no \(SetFiles.missing(lock: FileManager.default.fileExists(atPath: staging + "/" + SetFiles.lockName), signature: FileManager.default.fileExists(atPath: staging + "/" + SetFiles.signatureName)))",
                fix: "publish a signed set (`plugboard lock --plugins DIR --sign KEYFILE`, then `plugboard publish DIR REF`); nothing was installed")
        }
        return try verdict(lock: lock, signature: signature, admitted: admit(lock, signature: signature), files: files)
    }

    /// The rest of ``verify(staging:files:)`` for a lock file `admitted`
    /// already (a pull admits it before fetching the files): every file
    /// against it, then whether the set in the directory is this one.
    package func verdict(lock: [UInt8], signature: String, admitted: (signed: SignedLock, files: [String: String]),
                         files: [(title: String, sha256: String)]) throws(FleetError) -> Verdict {
        if let mismatch = SetFiles.mismatch(files, listed: admitted.files) {
            throw FleetError(.setMismatch, directory, reason: "the set does not match its signed lock file: \(mismatch)", fix: "publish the set again from the signed folder; nothing was installed")
        }
        // Checked like any set first: the same lock file with other files is
        // no "unchanged"; nor is the same lock signed again (a promotion to
        // another channel, a later expiry, a higher sequence): its signature
        // must reach the hosts too.
        let installedLock = FileManager.default.contents(atPath: lockFile).map(Array.init)
        let installedSignature = FileManager.default.contents(atPath: lockFile + ".minisig").map(Array.init)
        return installedLock == lock && installedSignature == Array(signature.utf8) ? .unchanged(admitted.signed) : .install(admitted.signed)
    }

    /// Records `signed` as accepted, then makes `staging` the directory in
    /// one step and keeps the set it replaces as ``previous``. The record
    /// comes first: a kill between the two leaves it raised over the old set
    /// (hosts refuse that set until the next pull, which the record of the
    /// same lock file lets through, switches the new one in), never a new set
    /// with the record below it. A record that cannot be written installs nothing; a failed switch
    /// puts the record back.
    package func switchIn(staging: String, signed: SignedLock) throws(FleetError) {
        // Every byte on disk before the switch can be seen.
        syncTree(staging)
        let saved = signatures.saveRecord(for: lockFile)
        try record(signed, lock: FileManager.default.contents(atPath: staging + "/" + SetFiles.lockName).map(Array.init) ?? [])
        if access(directory, F_OK) != 0 {
            guard rename(staging, directory) == 0 else {
                let error = switchFailed()
                signatures.restoreRecord(saved, lockFile: lockFile)
                throw error
            }
        } else {
            guard fleet_rename_exchange(staging, directory) == 0 else {
                let error = switchFailed()
                signatures.restoreRecord(saved, lockFile: lockFile)
                throw error
            }
            // `staging` now holds the replaced set. The last previous set is
            // moved aside before it goes, so a kill never leaves none.
            let older = "\(previous).old-\(getpid())"
            _ = rename(previous, older)
            _ = rename(staging, previous)
            try? FileManager.default.removeItem(atPath: older)
        }
        syncFolder(parent)
    }

    /// Raises the record of the directory to `signed` (never lowers it).
    package func record(_ signed: SignedLock, lock: [UInt8]) throws(FleetError) {
        if let problem = signatures.accept(signed, lockFile: lockFile, lockSHA256: SHA256.hex(lock)) {
            throw FleetError(.recordUnwritable, lockFile, reason: problem,
                fix: "make the records folder writable by this user (--sequence-records, else --cache); nothing was installed")
        }
    }

    /// Exchanges the directory with ``previous`` (rollback): the replaced
    /// set becomes the previous one, so a second rollback undoes the first.
    package func swapWithPrevious() throws(FleetError) {
        guard fleet_rename_exchange(previous, directory) == 0 else { throw switchFailed() }
        syncFolder(parent)
    }

    private func switchFailed() -> FleetError {
        FleetError(.installFailed, directory, reason: "cannot switch the new set in: \(String(cString: strerror(errno)))",
            fix: "the plugins directory must be a folder on the same file system as its parent, which this user can write; the installed set is unchanged")
    }

    private func syncTree(_ folder: String) {
        for name in (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? [] {
            let fd = open(folder + "/" + name, O_RDONLY | O_CLOEXEC)
            if fd >= 0 { fsync(fd); close(fd) }
        }
        syncFolder(folder)
    }

    private func syncFolder(_ folder: String) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
    }
}

extension String {
    var withLeadingSlash: String { hasPrefix("/") ? self : "/" + self }
}
