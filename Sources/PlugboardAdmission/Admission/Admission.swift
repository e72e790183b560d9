import Plugboard
import PlugboardCore

/// The one way bytes on disk become code the host may load: a path in, a
/// ``CheckedImage`` out. Discovery, lazy activation, reload, the dev loop,
/// `inspect`, `lock` and the interface libraries of `lib/` all come through
/// here, so no path can skip a check or take them in another order.
///
/// The order, fixed (docs/loading.md, "Admission"):
/// 1. **trust**: the file and every folder above it (``DirectoryTrust``);
///    under a lock file, the lock file too: usable, signed when signatures
///    are required, and listing the file (nothing else is even read);
/// 2. **one read** with `pread`: size limit, no special files, no change while read;
/// 3. **static checks** on those bytes: ELF for this machine, then for a
///    plugin everything ``FileCompatibility`` checks (nothing runs);
/// 4. **lock entry**: under a lock file, the SHA-256 of *these* bytes is
///    the one recorded;
/// 5. **private copy** of these bytes, under a name never used before.
///
/// ``CheckedImage`` and ``LoadableImage`` are declared in this file with
/// `fileprivate` initializers, so nothing else can make one, and the loader
/// takes only a ``LoadableImage``: a checked image joined with a scan that
/// agrees with its lock entry (``join(_:with:from:)``).
package struct Admission: Sendable {
    /// What is being admitted: plugins get every static check; an interface
    /// library only the ELF ones (it has no entry point) and is copied under
    /// its own name, where plugins find it through `$ORIGIN`.
    package enum Kind: Sendable { case plugin, interfaceLibrary }

    /// Why a file was not admitted, and what was learned of it first.
    package struct Refusal: Error, Sendable {
        package let error: PluginLoadError
        /// Set when the bytes were read and parsed: their identity, hash and ELF facts.
        package var read: (identity: FileIdentity, hash: UInt64, details: PluginRecord.FileDetails?)?
        /// Whether the refusal says something lasting about the bytes (a
        /// static check), worth remembering in the registry cache; trust and
        /// lock refusals depend on the machine, not on the file.
        package var isAboutContents = false
    }

    package let environment: HostEnvironment
    let trust: DirectoryTrust
    package let lock: LockPolicy?
    package let copies: PrivateCopies
    /// Record each admitted file's SHA-256 even without a lock file (`plugboard lock`).
    let recordsSHA256: Bool

    package init(environment: HostEnvironment, trust: DirectoryTrust, lock: LockPolicy?, copies: PrivateCopies, recordsSHA256: Bool) {
        self.environment = environment
        self.trust = trust
        self.lock = lock
        self.copies = copies
        self.recordsSHA256 = recordsSHA256
    }

    /// Step 1 alone: the path to read `candidate` through once it and its
    /// folders are trusted. Warm discovery without a lock file stops here:
    /// the cache may save the read and the scan, and activation admits the
    /// bytes in full.
    package func trusted(_ candidate: PluginCandidate, ownership: inout OwnershipCheck) -> Result<String, PluginLoadError> {
        if let problem = candidate.problem { return .failure(problem) }
        guard let resolved = candidate.resolvedPath else {
            return .failure(.unreadable(path: candidate.path, reason: "cannot resolve or stat it"))
        }
        guard trust.enforced else { return .success(resolved) }
        return ownership.check(
            path: candidate.path, resolved: resolved, folder: OwnershipCheck.parent(of: candidate.path),
            trusted: trust.trustedDirectories, listed: candidate.listed)
    }

    /// Every step, in order. `label` names the private copy (an interface
    /// library's copy keeps its file name).
    package func admit(
        _ candidate: PluginCandidate, as kind: Kind = .plugin, label: String? = nil, ownership: inout OwnershipCheck
    ) -> Result<CheckedImage, Refusal> {
        let path = candidate.path
        // 1. Trust.
        let readPath: String
        switch trusted(candidate, ownership: &ownership) {
        case let .success(checked): readPath = checked
        case let .failure(error): return .failure(Refusal(error: error))
        }
        // Under a lock file, nothing it does not vouch for (unsigned when
        // signatures are required, or not listed) is even read.
        if let lock, let problem = lock.listingProblem(path, kind: kind) { return .failure(Refusal(error: problem)) }
        // 2. One read.
        let bytes: (identity: FileIdentity, bytes: [UInt8], hash: UInt64)
        switch PluginFile.readBytes(readPath, reportedAs: path) {
        case let .success(read): bytes = read
        case let .failure(error):
            // An empty or oversized file is a fact about it; the others are about this moment.
            let lasting = ![PluginLoadError.Code.unreadable, .fileChanged, .notAFile].contains(error.code)
            return .failure(Refusal(error: error, isAboutContents: lasting))
        }
        // The trust check's verdict is about the file the directory listed:
        // another put in its place since (renamed over it, or reached
        // through a folder link changed) was not checked, and is not read.
        if trust.enforced, let listed = candidate.identity,
            listed.device != bytes.identity.device || listed.inode != bytes.identity.inode {
            return .failure(Refusal(error: .fileChanged(path: path, detail: "another file took its place after its ownership was checked")))
        }
        // 3. Static checks on these bytes: ELF for this machine first.
        let file: PluginFile
        switch PluginFile.parse(bytes, reportedAs: path) {
        case let .success(parsed): file = parsed
        case let .failure(error):
            return .failure(Refusal(error: error, read: (bytes.identity, bytes.hash, nil), isAboutContents: true))
        }
        let details = PluginRecord.FileDetails(file.image)
        let facts = (file.identity, file.hash, Optional(details))
        if kind == .plugin, let problem = FileCompatibility.problem(in: file.image, path, environment) {
            return .failure(Refusal(error: problem, read: facts, isAboutContents: true))
        }
        // 4. The lock entry, against the SHA-256 of these bytes.
        let sha256 = lock != nil || recordsSHA256 ? SHA256.hex(file.bytes) : nil
        var entry: LockFile.Entry?
        if let lock, let sha256 {
            switch lock.entry(for: path, sha256: sha256, kind: kind) {
            case let .success(found): entry = found
            case let .failure(error): return .failure(Refusal(error: error, read: facts))
            }
        }
        // 5. The private copy of these bytes.
        let copy: String
        do {
            switch kind {
            case .plugin: copy = try copies.write(file.bytes, label: label ?? LockFile.fileName(path))
            case .interfaceLibrary: copy = try copies.install(file.bytes, as: LockFile.fileName(path))
            }
        } catch {
            return .failure(Refusal(error: .copyFailed(path: path, reason: "\(error)"), read: facts))
        }
        return .success(CheckedImage(
            path: path, readPath: readPath, identity: file.identity, hash: file.hash, sha256: sha256, details: details,
            copy: copy, lockEntry: entry))
    }

    /// Why `image`, admitted at discovery, may no longer be loaded: under a
    /// lock file, the lock file as it is now (its signature, expiry, listing
    /// and the recorded SHA-256) must still vouch for its bytes when the
    /// plugin starts, however long after its discovery. nil when it may.
    package func stillVouched(_ image: LoadableImage, kind: Kind = .plugin) -> PluginLoadError? {
        guard let lock else { return nil }
        guard let sha256 = image.checked.sha256 else { return .notLocked(path: image.path, lockFile: lock.path ?? "") }
        if case let .failure(problem) = lock.entry(for: image.path, sha256: sha256, kind: kind) { return problem }
        return nil
    }

    /// Where a scan joined to a checked image comes from.
    package enum ScanSource: Sendable {
        /// A scanner process loaded this image's own copy.
        case thisImage
        /// The registry cache remembers a scan of bytes with this content hash
        /// (nil: it does not say, so it cannot vouch for any bytes).
        case remembered(hash: String?)
    }

    /// A checked image and a scan, when they agree: the scan is of these
    /// bytes (a remembered scan's hash must be theirs), and under a lock file
    /// the scanned id and version are the ones recorded for the file
    /// (`lock-id-mismatch`).
    package func join(_ image: CheckedImage, with scan: ScannedPlugin, from source: ScanSource) -> Result<LoadableImage, PluginLoadError> {
        if case let .remembered(hash) = source, hash != ContentHash.text(image.hash) {
            return .failure(.fileChanged(path: image.path, detail: "it is not the file that was scanned: it changed since"))
        }
        if let entry = image.lockEntry, entry.id != scan.id || entry.version != scan.version, let lock {
            return .failure(.lockIDMismatch(
                path: image.path, found: "\(scan.id) \(scan.version)", recorded: "\(entry.id) \(entry.version)", lockFile: lock.path ?? ""))
        }
        return .success(LoadableImage(checked: image, scan: scan))
    }
}

// MARK: - The only values the loader takes (declared here: their initializers are this file's)

/// A file that passed every step of ``Admission``, in order: trusted, read
/// once, statically checked, matched to its lock entry, and copied. Only
/// ``Admission/admit(_:as:label:ownership:)`` makes one.
package struct CheckedImage: Sendable {
    /// As found (in the plugins directory, or as given): for messages and records.
    package let path: String
    /// The real path the bytes were read through, once the trust check walked it.
    package let readPath: String
    /// The file's identity while it was read.
    package let identity: FileIdentity
    /// ``ContentHash`` of the bytes read: what the registry cache remembers.
    package let hash: UInt64
    /// Lowercase hex SHA-256 of the bytes read, when a lock file is in force
    /// or a lock file is being written.
    package let sha256: String?
    /// What the ELF file says, for `inspect` and the cache.
    package let details: PluginRecord.FileDetails
    /// The private copy of exactly those bytes: what a scanner or the host loads.
    package let copy: String
    /// The lock file's entry for the file, under a lock file.
    let lockEntry: LockFile.Entry?

    fileprivate init(
        path: String, readPath: String, identity: FileIdentity, hash: UInt64, sha256: String?,
        details: PluginRecord.FileDetails, copy: String, lockEntry: LockFile.Entry?
    ) {
        self.path = path
        self.readPath = readPath
        self.identity = identity
        self.hash = hash
        self.sha256 = sha256
        self.details = details
        self.copy = copy
        self.lockEntry = lockEntry
    }
}

/// A ``CheckedImage`` joined with the scan of its bytes (fresh, or remembered
/// by the cache under the same content hash) and agreeing with its lock
/// entry. The only thing ``PluginLoader`` loads into the host; only
/// ``Admission/join(_:with:from:)`` makes one.
package struct LoadableImage: Sendable {
    package let checked: CheckedImage
    /// What the scanner process read from the descriptor.
    package let scan: ScannedPlugin

    package var path: String { checked.path }

    fileprivate init(checked: CheckedImage, scan: ScannedPlugin) {
        self.checked = checked
        self.scan = scan
    }
}
