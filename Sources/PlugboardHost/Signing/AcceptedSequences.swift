import Foundation
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

    init(stateDirectory: String, isUsable: Bool) {
        directory = isUsable ? stateDirectory + "/signed-locks" : nil
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
        let remembered = inMemory.withLock { $0[lockFile] }
        guard let file = file(for: lockFile), let data = FileManager.default.contents(atPath: file),
              let stored = try? JSONDecoder.iso8601.decode(Accepted.self, from: data), stored.lockFile == lockFile
        else { return remembered }
        guard let remembered else { return stored }
        return remembered.sequence >= stored.sequence ? remembered : stored
    }

    /// Remembers `accepted` when it is newer than the last.
    func record(_ accepted: Accepted) {
        if let last = last(for: accepted.lockFile), last.sequence >= accepted.sequence { return }
        inMemory.withLock { $0[accepted.lockFile] = accepted }
        guard let directory, let file = file(for: accepted.lockFile), let data = try? JSONEncoder.iso8601.encode(accepted) else { return }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Written whole and renamed into place: a crash leaves the old number or the new one.
        try? data.write(to: URL(fileURLWithPath: file), options: .atomic)
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
