import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardAdmission

/// The registry cache on disk: what every plugin file examined so far turned
/// out to be, keyed by path and file identity, so a warm start `stat`s the
/// files and opens none of them.
///
/// One file per host kind (SDK ABI, toolchain and SDK image), so debug,
/// release and test hosts keep their own entries. Written whole to a temporary file
/// and renamed into place: readers see the old file or the new one, never a
/// torn one, and two hosts writing at once leave one valid file (the last
/// rename wins; the loser's new entries are simply examined again later).
/// A file that cannot be decoded, or was written by another format or
/// host, is ignored with one warning and rebuilt.
package struct RegistryCache: Sendable {
    /// 2: the compact binary coding (1 was JSON); 3: a requirement is one
    /// string (see ``ScannedPlugin``); 4: read in place (``CacheEntries``):
    /// an index sorted by path, entries decoded when asked for; 5: an entry
    /// is its fields in a fixed order (``CacheEntry/bytes()``), not `Codable`;
    /// 6: a plugin's sandbox needs (SDK 2.3) after its requirements; 7: one
    /// encoding for the whole file (CacheFields.swift), the host key, the
    /// quarantine and the file details included.
    static let format = 7

    /// What the outcome of examining a file depends on besides the file.
    package struct HostKey: Sendable, Equatable {
        let sdkABI: String
        let toolchain: String
        /// The SDK image the host runs with (`libPlugboard.so`, or the host's
        /// own executable when it embeds the SDK by mistake): the SDK-copy
        /// and missing-symbol checks depend on it.
        let sdkImage: String
    }

    package let directory: String
    let host: HostKey
    /// False when the directory failed its trust check: nothing is read or written.
    let isUsable: Bool

    package init(directory: String, environment: HostEnvironment, isUsable: Bool = true) {
        self.directory = directory
        self.isUsable = isUsable
        let image = environment.sdkImagePath.map { PluginDirectory.realPath($0) ?? $0 } ?? ""
        host = HostKey(
            sdkABI: environment.sdkABI.description, toolchain: environment.runtimeToolchain ?? environment.compiledToolchain,
            sdkImage: image)
    }

    /// `registry-<hash of the host key>.cache`.
    var file: String {
        let key = Array("\(host.sdkABI)\n\(host.toolchain)\n\(host.sdkImage)".utf8)
        let hash = key.withUnsafeBytes(ContentHash.of)
        return "\(directory)/registry-\(ContentHash.text(hash)).cache"
    }

    /// The entries on disk, and a warning if the file was there but unusable.
    func load() -> (entries: CacheEntries, warning: HostDiagnostic?) {
        guard isUsable else { return (CacheEntries(), nil) }
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return (CacheEntries(), nil) }  // no cache yet
        let opened = OpenFile(descriptor: fd)  // closes it
        // The header, the index and the paths usually fit; entries are read when asked for.
        guard let bytes = opened.read(at: 0, count: min(opened.size, 1 << 16)) else {
            return (CacheEntries(), warning("cannot be read (\(String(cString: strerror(errno))))"))
        }
        guard StoredEntries.isThisLayout(bytes) else {
            return (CacheEntries(), warning("is damaged or truncated, or older than format 4 (not a registry cache of this layout)"))
        }
        if let format = StoredEntries.format(of: bytes), format != Self.format {
            return (CacheEntries(), warning("has format \(format), this host reads format \(Self.format)"))
        }
        let stored: StoredEntries
        do {
            // A small cache was read whole: its entries come from memory.
            let source = bytes.count == opened.size ? OpenFile(bytes: bytes) : opened
            stored = try StoredEntries(file: source, head: bytes)
        } catch {
            return (CacheEntries(), warning("is damaged or truncated (\(error))"))
        }
        guard stored.host == host else {
            return (CacheEntries(), warning("belongs to another host (SDK ABI \(stored.host.sdkABI), \(stored.host.toolchain), SDK image \(stored.host.sdkImage))"))
        }
        return (CacheEntries(stored: stored), nil)
    }

    /// Writes `entries` atomically; a warning when it could not.
    func save(_ entries: CacheEntries) -> HostDiagnostic? {
        guard isUsable else { return nil }
        let data: [UInt8]
        do {
            data = try entries.encoded(host: host)
        } catch {
            return failure("cannot be encoded (\(error))")
        }
        if let failed = makeDirectories(directory) {
            return failure("cannot create \(failed.path) (\(String(cString: strerror(failed.errno))))")
        }
        // Durable before it replaces the old file: a crash leaves one or the other.
        let temporary = "\(file).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        return replaceFile(file, with: data, temporary: temporary, mode: 0o600).map { failure("cannot be written (\($0))") }
    }

    private func warning(_ problem: String) -> HostDiagnostic {
        HostDiagnostic(.warning, code: "cache-ignored",
            message: "registry cache \(file) \(problem); ignored, every plugin file is examined again and the cache rebuilt",
            file: file)
    }

    private func failure(_ problem: String) -> HostDiagnostic {
        HostDiagnostic(.warning, code: "cache-unwritable",
            message: "registry cache \(file) \(problem); the next start examines the files again. Set a writable cache directory (PluginHost.Configuration.paths.cache, `--cache DIR`)",
            file: file)
    }
}
