import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardAdmission

/// The quarantines hosts decide while running plugins (a dead host's
/// journal note, an isolated crash loop), kept once per state directory,
/// beside the journal, for every host that shares it. They are facts about
/// a file's behaviour, whatever host ran it: the registry cache is one file
/// per host kind, so a quarantine kept only there was seen by the host that
/// read the journal note and by no other (a `plugboard list` consumed a
/// server's note, and the server ran the crashing plugin again).
///
/// `quarantined.json`, written whole and renamed into place under a lock
/// (`quarantined.lock`), so hosts updating it at once lose nothing. An
/// entry holds while its file's identity is unchanged. A rescan replaces it
/// with a mark that it was lifted, and only that mark lifts the quarantine
/// in other hosts' caches: a record that could not be written or read
/// lifts nothing.
package struct SharedQuarantines: Sendable {
    struct Entry: Codable, Sendable, Equatable {
        let path: String
        let identity: FileIdentity
        /// nil: lifted (by a rescan).
        let quarantine: Quarantine?
        /// What a scan had learned of the file, so the record still names it.
        let plugin: ScannedPlugin?
    }

    let directory: String
    /// False when the state directory failed its trust check: nothing is read or written.
    let isUsable: Bool

    package init(directory: String, isUsable: Bool) {
        self.directory = directory
        self.isUsable = isUsable
    }

    var file: String { directory + "/quarantined.json" }

    /// The entries by path; empty when there are none (or the file cannot be read).
    func load() -> [String: Entry] {
        guard isUsable, let data = FileManager.default.contents(atPath: file),
              let entries = try? JSONDecoder().decode([Entry].self, from: data) else { return [:] }
        return Dictionary(entries.map { ($0.path, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Changes the entries under the lock; entries whose file changed or is
    /// gone are dropped. A warning when the file could not be written.
    func update(_ change: (inout [String: Entry]) -> Void) -> HostDiagnostic? {
        guard isUsable else { return nil }
        let lock = open(directory + "/quarantined.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lock >= 0 else { return failure(String(cString: strerror(errno))) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        var entries = load()
        change(&entries)
        entries = entries.filter { FileIdentity.of(path: $0.key) == $0.value.identity }
        let sorted = entries.values.sorted { $0.path < $1.path }
        guard let data = try? JSONEncoder().encode(sorted) else { return failure("cannot be encoded") }
        let temporary = "\(file).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        return replaceFile(file, with: [UInt8](data), temporary: temporary, mode: 0o600).map(failure)
    }

    private func failure(_ problem: String) -> HostDiagnostic {
        HostDiagnostic(.warning, code: "cache-unwritable",
            message: "the shared quarantine record \(file) cannot be written (\(problem)); other hosts of this state directory may not see a quarantine this one decided",
            file: file)
    }
}
