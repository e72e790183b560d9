import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A lock file in force: where it is and what reading it gave. Read when the
/// host is made, and again when the file changed since (`plugboard install`
/// updates it under a running host). An unreadable or untrusted one refuses
/// every file.
final class LockPolicy: Sendable {
    let path: String
    private let checksOwnership: Bool
    /// The identity of the file last read, and what reading it gave.
    private let read: Mutex<(identity: FileIdentity?, file: Result<LockFile, PluginLoadError>)>

    init(path: String, checksOwnership: Bool) {
        self.path = path
        self.checksOwnership = checksOwnership
        read = Mutex((FileIdentity.of(path: path), Self.load(path, checksOwnership: checksOwnership)))
    }

    /// The lock file as it is now: read again when its identity changed.
    var file: Result<LockFile, PluginLoadError> {
        let now = FileIdentity.of(path: path)
        return read.withLock { read in
            if read.identity != now { read = (now, Self.load(path, checksOwnership: checksOwnership)) }
            return read.file
        }
    }

    private static func load(_ path: String, checksOwnership: Bool) -> Result<LockFile, PluginLoadError> {
        Result { () throws(PluginLoadError) in
            // A lock file others can write would let them approve their own files.
            // (A missing one is LockFile.load's to report, with how to write it.)
            var ownership = OwnershipCheck()
            if checksOwnership, access(path, F_OK) == 0, let problem = ownership.problem(file: path) {
                throw .lockFileInvalid(path: path, reason: problem.reason)
            }
            return try LockFile.load(path)
        }
    }

    /// Why `file` may not be loaded whatever its bytes: the lock file is
    /// unusable, or does not list it.
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
            return listed ? nil : .notLocked(path: file, lockFile: path)
        }
    }

    /// The entry recorded for `file` when `sha256` (of the bytes read) is the
    /// recorded one; an interface library has no id, so no entry.
    func entry(for file: String, sha256: String, kind: Admission.Kind) -> Result<LockFile.Entry?, PluginLoadError> {
        // One read for both questions: listed, and with these bytes.
        let lockFile = self.file
        if let problem = listingProblem(file, kind: kind, in: lockFile) { return .failure(problem) }
        guard case let .success(lock) = lockFile else { return .success(nil) }
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
            return .failure(.lockMismatch(path: file, expected: expected, found: sha256, lockFile: path))
        }
        return .success(entry)
    }
}
