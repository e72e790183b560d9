import Foundation

/// The plugins a host may load, by file name, with the SHA-256 of their
/// bytes (`plugboard lock` writes it; `PluginHost.Configuration.lockFile` or
/// `--locked` enforces it). Like `Package.resolved`: what was reviewed is
/// what runs, and anything else is refused before any of its code runs.
public struct LockFile: Sendable, Codable, Equatable {
    public struct Entry: Sendable, Codable, Equatable {
        /// The file's name in the plugins directory.
        public let file: String
        public let id: String
        public let version: String
        /// Lowercase hex SHA-256 of the file's bytes.
        public let sha256: String

        public init(file: String, id: String, version: String, sha256: String) {
            self.file = file
            self.id = id
            self.version = version
            self.sha256 = sha256
        }
    }

    /// The format's version.
    public var lockVersion = 1
    public var plugins: [Entry]

    public init(plugins: [Entry]) {
        self.plugins = plugins.sorted { $0.file < $1.file }
    }

    /// The default lock file of a plugins directory.
    public static func defaultPath(for pluginsDirectory: String) -> String {
        PluginDirectory.absolutePath(pluginsDirectory) + "/plugboard.lock"
    }

    public static func load(_ path: String) throws(PluginLoadError) -> LockFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .lockFileInvalid(path: path, reason: "cannot read it; write it with `plugboard lock --plugins DIR`")
        }
        do {
            return try JSONDecoder().decode(LockFile.self, from: data)
        } catch {
            throw .lockFileInvalid(path: path, reason: "it is not a Plugboard lock file (\(error)); write it again with `plugboard lock --plugins DIR`")
        }
    }

    public func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// The lowercase hex SHA-256 of `bytes`, as entries record it.
    public static func sha256(of bytes: [UInt8]) -> String { SHA256.hex(bytes) }

    func entry(forFile path: String) -> Entry? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return plugins.first { $0.file == name }
    }

    /// Why `bytes` of the file at `path` may not be loaded under this lock, if they may not.
    func problem(with bytes: [UInt8], at path: String, lockPath: String) -> PluginLoadError? {
        guard let entry = entry(forFile: path) else { return .notLocked(path: path, lockFile: lockPath) }
        let found = SHA256.hex(bytes)
        return found == entry.sha256 ? nil : .lockMismatch(path: path, expected: entry.sha256, found: found, lockFile: lockPath)
    }
}
