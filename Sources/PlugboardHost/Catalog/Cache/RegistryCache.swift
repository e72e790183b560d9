import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
struct RegistryCache: Sendable {
    /// 2: the compact binary coding (1 was JSON); 3: a requirement is one
    /// string (see ``ScannedPlugin``).
    static let format = 3

    /// What the outcome of examining a file depends on besides the file.
    struct HostKey: Sendable, Codable, Equatable {
        let sdkABI: String
        let toolchain: String
        /// The SDK image the host runs with (`libPlugboard.so`, or the host's
        /// own executable when it embeds the SDK by mistake): the SDK-copy
        /// and missing-symbol checks depend on it.
        let sdkImage: String
    }

    /// The start of every format's file.
    struct Header: Decodable {
        let format: Int
    }

    struct Contents: Codable {
        let format: Int
        let host: HostKey
        var entries: [String: CacheEntry]
    }

    let directory: String
    let host: HostKey
    /// False when the directory failed its trust check: nothing is read or written.
    let isUsable: Bool

    init(directory: String, environment: HostEnvironment, isUsable: Bool = true) {
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
    func load() -> (entries: [String: CacheEntry], warning: HostDiagnostic?) {
        guard isUsable else { return ([:], nil) }
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return ([:], nil) }  // no cache yet
        defer { close(fd) }
        guard let bytes = readToEnd(fd) else {
            return ([:], warning("cannot be read (\(String(cString: strerror(errno))))"))
        }
        // The format first: another format's entries may not decode at all.
        if let header = try? CompactDecoder().decode(Header.self, from: bytes), header.format != Self.format {
            return ([:], warning("has format \(header.format), this host reads format \(Self.format)"))
        }
        let contents: Contents
        do {
            contents = try CompactDecoder().decode(Contents.self, from: bytes)
        } catch {
            return ([:], warning("is damaged or truncated (\(Self.describe(error)))"))
        }
        guard contents.format == Self.format else {
            return ([:], warning("has format \(contents.format), this host reads format \(Self.format)"))
        }
        guard contents.host == host else {
            return ([:], warning("belongs to another host (SDK ABI \(contents.host.sdkABI), \(contents.host.toolchain), SDK image \(contents.host.sdkImage))"))
        }
        return (contents.entries, nil)
    }

    /// Writes `entries` atomically; a warning when it could not.
    func save(_ entries: [String: CacheEntry]) -> HostDiagnostic? {
        guard isUsable else { return nil }
        let data: [UInt8]
        do {
            data = try CompactEncoder().encode(Contents(format: Self.format, host: host, entries: entries))
        } catch {
            return failure("cannot be encoded (\(error))")
        }
        if let failed = makeDirectories(directory) {
            return failure("cannot create \(failed.path) (\(String(cString: strerror(failed.errno))))")
        }
        let temporary = "\(file).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return failure("cannot be written (\(String(cString: strerror(errno))))") }
        let written = data.withUnsafeBytes { writeAll(fd, $0) }
        // Durable before it replaces the old file: a crash leaves one or the other.
        let synced = written && fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, file) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            return failure("cannot be written (\(reason))")
        }
        return nil
    }

    private func warning(_ problem: String) -> HostDiagnostic {
        HostDiagnostic(.warning, code: "cache-ignored",
            message: "registry cache \(file) \(problem); ignored, every plugin file is examined again and the cache rebuilt",
            file: file)
    }

    private func failure(_ problem: String) -> HostDiagnostic {
        HostDiagnostic(.warning, code: "cache-unwritable",
            message: "registry cache \(file) \(problem); the next start examines the files again. Set a writable cache directory (PluginHost.Configuration.cacheDirectory, `--cache DIR`)",
            file: file)
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): context.debugDescription
        case DecodingError.keyNotFound(let key, _): "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: "\(error)"
        }
    }


}
