#if canImport(Glibc)
import Glibc
#endif

/// A lock file in force: where it is and what reading it gave (read once, when
/// the host is made). An unreadable or untrusted one refuses every file.
struct LockPolicy: Sendable {
    let path: String
    let file: Result<LockFile, PluginLoadError>

    init(path: String, checksOwnership: Bool) {
        self.path = path
        file = Result { () throws(PluginLoadError) in
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
        switch self.file {
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
        if let problem = listingProblem(file, kind: kind) { return .failure(problem) }
        guard case let .success(lock) = self.file else { return .success(nil) }
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
