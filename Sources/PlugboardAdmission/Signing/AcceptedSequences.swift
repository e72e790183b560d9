import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import PlugboardCore

/// The highest sequence number a host accepted for each signed lock file,
/// kept in its state directory (which passes the same trust checks as a
/// plugins directory), so a replayed older set is refused after a restart
/// too. Without a trusted state directory it lasts as long as the process.
package final class AcceptedSequences: Sendable {
    /// What is kept per lock file.
    struct Accepted: Codable, Equatable {
        var lockFile: String
        var sequence: UInt64
        var channel: String
        var keyID: String
        var accepted: Date
        /// SHA-256 (hex) of the lock file accepted: the same set accepted
        /// again (an install interrupted after its record) is no reuse of
        /// the sequence. Absent in records written before it was kept.
        var lockSHA256: String? = nil
    }

    /// nil when the state directory is not trusted: remembered in memory only.
    private let directory: String?
    private let inMemory = Mutex<[String: Accepted]>([:])
    private let report: @Sendable (HostDiagnostic) -> Void

    package init(stateDirectory: String, isUsable: Bool, report: @escaping @Sendable (HostDiagnostic) -> Void = { _ in }) {
        directory = isUsable ? stateDirectory + "/signed-locks" : nil
        self.report = report
    }

    /// The records in `folder` (``PluginHost/Configuration/Trust/sequenceRecords``);
    /// in memory only, with one warning, when it fails the ownership checks.
    package init(folder: String, checksOwnership: Bool, report: @escaping @Sendable (HostDiagnostic) -> Void = { _ in }) {
        let absolute = PluginDirectory.absolutePath(folder)
        var ownership = OwnershipCheck()
        let problem = checksOwnership ? (access(absolute, F_OK) == 0 ? ownership.problem(file: absolute).map(\.reason) : OwnershipCheck.problem(makingFolder: absolute)) : nil
        if let problem {
            report(HostDiagnostic(.warning, code: "sequence-records-untrusted",
                message: "\(absolute): not used for the records of accepted sequences: \(problem); a missing record is refused (lock-sequence-unknown) unless a floor is set. Fix it as the reason says (PluginHost.Configuration.trust.sequenceRecords, --sequence-records DIR)",
                file: absolute))
        }
        directory = problem == nil ? absolute : nil
        self.report = report
    }

    /// One key per lock file however its path is spelled (relative, through a symlink).
    private static func key(_ lockFile: String) -> String {
        PluginDirectory.resolvedPath(lockFile)
    }

    /// Whether the numbers outlive the process.
    var isPersistent: Bool { directory != nil }

    private func file(for lockFile: String) -> String? {
        // One file per lock file, named by the hash of its path: hosts of
        // different plugin sets sharing a state directory keep apart.
        directory.map { "\($0)/\(SHA256.hex(Array(lockFile.utf8)).prefix(24)).json" }
    }

    /// What is known of the last set accepted for a lock file.
    enum Record {
        case accepted(Accepted)
        /// None kept: the first use, or a record deleted (they look the same).
        case missing(file: String?)
        /// A record exists and cannot be read.
        case unreadable(file: String)
    }

    /// The last accepted for `lockFile`.
    func last(for lockFile: String) -> Accepted? {
        if case let .accepted(accepted) = record(for: lockFile, warn: true) { return accepted }
        return nil
    }

    /// The record for `lockFile`, the one in this process's memory included;
    /// `warn`: an unreadable one is a warning (where signatures are only preferred).
    func record(for lockFile: String, warn: Bool = false) -> Record {
        let lockFile = Self.key(lockFile)
        let remembered = inMemory.withLock { $0[lockFile] }
        guard let file = file(for: lockFile), access(file, F_OK) == 0 else {
            return remembered.map(Record.accepted) ?? .missing(file: file(for: lockFile))
        }
        guard let data = FileManager.default.contents(atPath: file),
              let stored = try? JSONDecoder.iso8601.decode(Accepted.self, from: data), stored.lockFile == lockFile else {
            if warn {
                report(HostDiagnostic(.warning, code: "signed-lock-state-unreadable",
                    message: "\(file): the last accepted sequence of \(lockFile) cannot be read, so an older set replayed now would not be refused; it is written again at the next accepted set. Check what changed it (the state directory is this host's alone)",
                    file: file))
            }
            return remembered.map(Record.accepted) ?? .unreadable(file: file)
        }
        guard let remembered else { return .accepted(stored) }
        // The later decision wins: a record lowered on purpose (`plugboard
        // rollback --lower-sequence`) counts at once in a running host.
        if stored.accepted > remembered.accepted { return .accepted(stored) }
        return .accepted(remembered.sequence >= stored.sequence ? remembered : stored)
    }

    /// Remembers `accepted` when it is newer than the last; why it could not be kept, when not.
    @discardableResult
    func record(_ accepted: Accepted) -> String? {
        var accepted = accepted
        accepted.lockFile = Self.key(accepted.lockFile)
        if let last = last(for: accepted.lockFile), last.sequence >= accepted.sequence { return nil }
        guard let problem = replace(accepted) else { return nil }
        report(HostDiagnostic(.warning, code: "signed-lock-state-unwritable",
            message: "\(problem); after a restart an older set would not be refused. Make the state directory writable (PluginHost.Configuration.paths.cache, --cache DIR)",
            file: file(for: accepted.lockFile)))
        return problem
    }

    /// Puts the record of `lockFile` back as `previous` was (none: removed),
    /// undoing a ``record(_:)`` whose set was not installed after all.
    func restore(_ previous: Accepted?, lockFile: String) {
        let key = Self.key(lockFile)
        if let previous {
            _ = replace(previous)
        } else {
            inMemory.withLock { $0[key] = nil }
            if let file = file(for: key) { unlink(file) }
        }
    }

    /// Makes `accepted` the record, lower or not; why it could not be kept.
    func replace(_ accepted: Accepted) -> String? {
        var accepted = accepted
        accepted.lockFile = Self.key(accepted.lockFile)
        inMemory.withLock { $0[accepted.lockFile] = accepted }
        guard let directory, let file = file(for: accepted.lockFile), let data = try? JSONEncoder.iso8601.encode(accepted) else { return nil }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // Written whole and renamed into place: a crash leaves the old number or the new one.
            try data.write(to: URL(fileURLWithPath: file), options: .atomic)
            return nil
        } catch {
            return "\(file): cannot record sequence \(accepted.sequence) of \(accepted.lockFile) (\(error))"
        }
    }
}

extension JSONDecoder {
    package static var iso8601: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

extension JSONEncoder {
    package static var iso8601: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
