import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The highest sequence number a host accepted for each signed lock file,
/// kept in its state directory (which passes the same trust checks as a
/// plugins directory), so a replayed older set is refused after a restart
/// too. Without a trusted state directory it lasts as long as the process.
final class AcceptedSequences: Sendable {
    /// What is kept per lock file.
    struct Accepted: Codable, Equatable {
        var lockFile: String
        var sequence: UInt64
        var channel: String
        var keyID: String
        var accepted: Date
    }

    /// nil when the state directory is not trusted: remembered in memory only.
    private let directory: String?
    private let inMemory = Mutex<[String: Accepted]>([:])
    private let report: @Sendable (HostDiagnostic) -> Void

    init(stateDirectory: String, isUsable: Bool, report: @escaping @Sendable (HostDiagnostic) -> Void = { _ in }) {
        directory = isUsable ? stateDirectory + "/signed-locks" : nil
        self.report = report
    }

    /// One key per lock file however its path is spelled (relative, through a symlink).
    private static func key(_ lockFile: String) -> String {
        PluginDirectory.realPath(lockFile) ?? PluginDirectory.absolutePath(lockFile)
    }

    /// Whether the numbers outlive the process.
    var isPersistent: Bool { directory != nil }

    private func file(for lockFile: String) -> String? {
        // One file per lock file, named by the hash of its path: hosts of
        // different plugin sets sharing a state directory keep apart.
        directory.map { "\($0)/\(SHA256.hex(Array(lockFile.utf8)).prefix(24)).json" }
    }

    /// The last accepted for `lockFile`.
    func last(for lockFile: String) -> Accepted? {
        let lockFile = Self.key(lockFile)
        let remembered = inMemory.withLock { $0[lockFile] }
        guard let file = file(for: lockFile), let data = FileManager.default.contents(atPath: file) else { return remembered }
        guard let stored = try? JSONDecoder.iso8601.decode(Accepted.self, from: data), stored.lockFile == lockFile else {
            report(HostDiagnostic(.warning, code: "signed-lock-state-unreadable",
                message: "\(file): the last accepted sequence of \(lockFile) cannot be read, so an older set replayed now would not be refused; it is written again at the next accepted set. Check what changed it (the state directory is this host's alone)",
                file: file))
            return remembered
        }
        guard let remembered else { return stored }
        return remembered.sequence >= stored.sequence ? remembered : stored
    }

    /// Remembers `accepted` when it is newer than the last.
    func record(_ accepted: Accepted) {
        var accepted = accepted
        accepted.lockFile = Self.key(accepted.lockFile)
        if let last = last(for: accepted.lockFile), last.sequence >= accepted.sequence { return }
        inMemory.withLock { $0[accepted.lockFile] = accepted }
        guard let directory, let file = file(for: accepted.lockFile), let data = try? JSONEncoder.iso8601.encode(accepted) else { return }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // Written whole and renamed into place: a crash leaves the old number or the new one.
            try data.write(to: URL(fileURLWithPath: file), options: .atomic)
        } catch {
            report(HostDiagnostic(.warning, code: "signed-lock-state-unwritable",
                message: "\(file): cannot record sequence \(accepted.sequence) of \(accepted.lockFile) (\(error)); after a restart an older set would not be refused. Make the state directory writable (PluginHost.Configuration.paths.cache, --cache DIR)",
                file: file))
        }
    }
}

extension JSONDecoder {
    static var iso8601: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

extension JSONEncoder {
    static var iso8601: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
