import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// The plugins a host may load, by file name, with the id, version and
/// SHA-256 that were checked and scanned, and the interface libraries of
/// `lib/` with their SHA-256 (`plugboard lock` writes it;
/// `PluginHost.Configuration.trust.lockFile` or `--locked` enforces it). Like
/// `Package.resolved`: what was reviewed is what runs, and anything else is
/// refused before any of its code runs.
package struct LockFile: Sendable, Codable, Equatable {
    package struct Entry: Sendable, Codable, Equatable {
        /// The file's name in the plugins directory.
        package let file: String
        package let id: String
        package let version: String
        /// Lowercase hex SHA-256 of the file's bytes.
        package let sha256: String
        /// The file's size in bytes (lock version 3; nil in older files):
        /// a pull reads no more of it than this.
        package let size: Int?

        package init(file: String, id: String, version: String, sha256: String, size: Int? = nil) {
            self.file = file
            self.id = id
            self.version = version
            self.sha256 = sha256
            self.size = size
        }
    }

    /// An interface library of the plugins directory's `lib/` folder.
    package struct Library: Sendable, Codable, Equatable {
        /// The file's name in `lib/`.
        package let file: String
        /// Lowercase hex SHA-256 of the file's bytes.
        package let sha256: String
        /// The file's size in bytes (lock version 3; nil in older files).
        package let size: Int?

        package init(file: String, sha256: String, size: Int? = nil) {
            self.file = file
            self.sha256 = sha256
            self.size = size
        }
    }

    /// The format's version: 2 adds ``libraries`` (a version 1 file lists
    /// none, so a locked host refuses every interface library until it is
    /// written again); 3 adds each file's size (older files still read:
    /// their files are fetched up to a fixed bound). A newer version is
    /// refused, naming it.
    var lockVersion = 3
    package static let newestVersion = 3
    package var plugins: [Entry]
    package var libraries: [Library]

    package init(plugins: [Entry], libraries: [Library] = []) {
        self.plugins = plugins.sorted { $0.file < $1.file }
        self.libraries = libraries.sorted { $0.file < $1.file }
    }

    private enum CodingKeys: String, CodingKey { case lockVersion, plugins, libraries }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lockVersion = try container.decode(Int.self, forKey: .lockVersion)
        guard (1...Self.newestVersion).contains(lockVersion) else { throw NewerVersion(version: lockVersion) }
        plugins = try container.decode([Entry].self, forKey: .plugins)
        libraries = try container.decodeIfPresent([Library].self, forKey: .libraries) ?? []
    }

    /// A lock version this host does not know.
    struct NewerVersion: Error { let version: Int }

    /// The default lock file of a plugins directory.
    package static func defaultPath(for pluginsDirectory: String) -> String {
        PluginDirectory.absolutePath(pluginsDirectory) + "/plugboard.lock"
    }

    package static func load(_ path: String) throws(PluginLoadError) -> LockFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .lockFileInvalid(path: path, reason: "cannot read it; write it with `plugboard lock --plugins DIR`")
        }
        return try decode(data, path: path)
    }

    /// The lock file of `data`, the bytes read from `path` (a host verifies
    /// their signature first, so they are read once).
    package static func decode(_ data: Data, path: String) throws(PluginLoadError) -> LockFile {
        do {
            return try JSONDecoder().decode(LockFile.self, from: data)
        } catch let newer as NewerVersion {
            throw .lockFileInvalid(path: path, reason: "it is lock version \(newer.version), written by a newer Plugboard; this host reads up to version \(newestVersion): upgrade the host, or write the lock file with this one's `plugboard lock --plugins DIR`")
        } catch {
            throw .lockFileInvalid(path: path, reason: "it is not a Plugboard lock file (\(error)); write it again with `plugboard lock --plugins DIR`")
        }
    }

    package func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// The lowercase hex SHA-256 of `bytes`, as entries record it.
    package static func sha256(of bytes: [UInt8]) -> String { SHA256.hex(bytes) }

    /// A file's name as its lock entry records it (and as its private copy is labelled).
    static func fileName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
