import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// One entry of a plugins directory that looks like a plugin (`*.so`).
package struct PluginCandidate: Sendable {
    /// Absolute path as found in the directory (a symlink stays a symlink).
    package let path: String
    /// The file itself: the path, or for a symlink entry the real file it
    /// leads to; nil if it cannot be resolved.
    package let resolvedPath: String?
    /// Why it cannot be a plugin, if that is already clear from the directory entry.
    package let problem: PluginLoadError?
    /// The resolved file's identity, from the `stat` the walk made anyway.
    package var identity: FileIdentity? = nil
    /// What `lstat` said of a plain file (not a symlink) at `path`, set only
    /// when `resolvedPath == path`: the trust check reads it rather than
    /// asking again (a system call per installed plugin of every start).
    /// Every admission makes its candidate just before it checks it.
    package var listed: stat? = nil
}

/// Finds plugin candidates in a directory.
///
/// Rules (docs/compatibility.md, "Checks, in order", steps 1 to 5):
/// - Every entry whose name ends in the platform's library suffix (`.so`) is a
///   candidate, including directories and broken links, so that they are
///   reported instead of silently skipped; hidden entries are skipped.
/// - Not recursive. Candidates are sorted by file name.
/// - Symlinks are followed (a dev loop may link a build output into the
///   directory); two entries that are the same file are one plugin, the
///   second is rejected as `duplicate-file`.
public enum PluginDirectory {
    static let librarySuffix = ".so"
    /// The SDK's own library file: plugins link it by this name, so no plugin can be called that.
    package static let sdkSoname = "libPlugboard.so"
    /// The folder of a plugins directory that holds interface libraries: the
    /// dynamic libraries of a host's own extension points that plugins need
    /// beside them. They are not plugins.
    package static let interfaceFolder = "lib"

    /// The `.so` files of `directory`'s interface folder, sorted; empty without one.
    package static func interfaceLibraries(in directory: String) -> [String] {
        let folder = absolutePath(directory) + "/" + interfaceFolder
        guard let names = libraryNames(in: folder) else { return [] }
        return names.sorted().map { folder + "/" + $0 }.filter { path in
            var info = stat()
            return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        }
    }

    /// Why a directory cannot be scanned at all (a struct with an extensible
    /// ``Code``, like ``PluginLoadError``).
    public struct ScanError: Error, Sendable, Equatable, CustomStringConvertible {
        /// A stable, machine-readable code.
        public struct Code: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
            public let rawValue: String
            public init(_ rawValue: String) { self.rawValue = rawValue }
            public init(stringLiteral value: String) { rawValue = value }
            public var description: String { rawValue }

            /// The directory cannot be opened: it does not exist, or its permissions forbid it.
            public static let cannotOpen = Code("plugins-directory-unreadable")
            /// The path is a file or something else, not a directory.
            public static let notADirectory = Code("plugins-directory-not-a-directory")
        }

        public let code: Code
        /// The directory.
        public let path: String
        /// What is wrong and what to do.
        public let reason: String
        /// The system call that failed, with its `errno`, when the error comes from one.
        public package(set) var systemCall: PluginLoadError.SystemCallFailure? = nil

        public var description: String { "\(path): \(reason)" }

        static func cannotOpen(path: String, call: String, errno: Int32) -> ScanError {
            var error = ScanError(
                code: .cannotOpen, path: path,
                reason: "cannot open plugins directory (\(String(cString: strerror(errno)))); check that it exists and can be read")
            error.systemCall = .init(call: call, errno: errno)
            return error
        }

        static func notADirectory(path: String) -> ScanError {
            ScanError(code: .notADirectory, path: path, reason: "not a directory; --plugins takes the directory that holds the .so files")
        }
    }

    /// `directory`, absolute, when it is a directory; why it cannot be
    /// scanned otherwise (also `plugboard install`'s first check).
    package static func existingDirectory(_ directory: String) throws(ScanError) -> String {
        let absolute = absolutePath(directory)
        var info = stat()
        guard stat(absolute, &info) == 0 else {
            throw .cannotOpen(path: absolute, call: "stat", errno: errno)
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .notADirectory(path: absolute) }
        return absolute
    }

    /// The candidates in `directory`, sorted by name.
    package static func scan(_ directory: String) throws(ScanError) -> [PluginCandidate] {
        let absolute = try existingDirectory(directory)
        guard let names = libraryNames(in: absolute) else {
            throw .cannotOpen(path: absolute, call: "opendir", errno: errno)
        }
        var seen: [FileKey: String] = [:]
        return names.sorted().map { name in
            candidate(at: absolute == "/" ? "/\(name)" : "\(absolute)/\(name)", seen: &seen)
        }
    }

    /// The names of the libraries in `folder` (not hidden, ending in `.so`,
    /// not the SDK's own), unsorted; nil when it cannot be opened (`errno` says why).
    private static func libraryNames(in folder: String) -> [String]? {
        guard let dir = opendir(folder) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(".") || !name.hasSuffix(librarySuffix) { continue }
            // The SDK's own library (beside a plugin in its build folder): plugins
            // link it by this very name, so no plugin can be called that.
            if name == Self.sdkSoname { continue }
            names.append(name)
        }
        return names
    }

    /// A single file given by path (`plugboard inspect FILE`).
    package static func candidate(at path: String) -> PluginCandidate {
        var seen: [FileKey: String] = [:]
        return candidate(at: absolutePath(path), seen: &seen)
    }

    /// Files given by path; the same file twice is a `duplicate-file`.
    package static func candidates(at paths: [String]) -> [PluginCandidate] {
        var seen: [FileKey: String] = [:]
        return paths.map { candidate(at: absolutePath($0), seen: &seen) }
    }

    private struct FileKey: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    private static func candidate(at path: String, seen: inout [FileKey: String]) -> PluginCandidate {
        var link = stat()
        guard lstat(path, &link) == 0 else {
            return PluginCandidate(path: path, resolvedPath: nil, problem: .unreadable(path: path, call: "lstat", errno: errno))
        }
        // A plain entry is what lstat saw; only a symlink needs a second look.
        var info = link
        guard (link.st_mode & S_IFMT) != S_IFLNK || stat(path, &info) == 0 else {
            let reason = (link.st_mode & S_IFMT) == S_IFLNK
                ? "broken symlink to \(readLink(path) ?? "?")" : String(cString: strerror(errno))
            return PluginCandidate(path: path, resolvedPath: nil, problem: .unreadable(path: path, reason: reason))
        }
        // Only a symlink needs resolving (its target's directories may be
        // links too); a plain file in a normalised absolute path is itself.
        let resolved = (link.st_mode & S_IFMT) == S_IFLNK ? realPath(path) : path
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return PluginCandidate(path: path, resolvedPath: resolved, problem: .notAFile(path: path, kind: "directory"))
        default: return PluginCandidate(path: path, resolvedPath: resolved, problem: .notAFile(path: path, kind: "special file (not a regular file)"))
        }
        // A file nobody may read is refused even when we could (as root): its
        // owner said so.
        if info.st_mode & (S_IRUSR | S_IRGRP | S_IROTH) == 0 {
            return PluginCandidate(path: path, resolvedPath: resolved, problem: .unreadable(path: path, reason: "no read permission (mode \(String(info.st_mode & 0o777, radix: 8)))"))
        }
        // Other permission problems show when the file is read (a change of
        // mode changes its ctime, so the cache never hides one).
        let identity = FileKey(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        if let original = seen[identity] {
            return PluginCandidate(path: path, resolvedPath: resolved, problem: .duplicateFile(path: path, original: original))
        }
        seen[identity] = path
        return PluginCandidate(
            path: path, resolvedPath: resolved, problem: nil, identity: FileIdentity(info),
            listed: (link.st_mode & S_IFMT) == S_IFLNK ? nil : link)
    }

    /// `path` made absolute against the working directory, without resolving symlinks.
    package static func absolutePath(_ path: String) -> String {
        if path.hasPrefix("/") { return normalized(path) }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return normalized(cwd == "/" ? "/\(path)" : "\(cwd)/\(path)")
    }

    /// Removes `.` components, doubled and trailing slashes (not `..`: symlinks make it ambiguous).
    private static func normalized(_ path: String) -> String {
        // Most paths are normal already (checked on the bytes; the trust
        // check asks for several per file): no "//", "/./", trailing "/" or "/.".
        var previous: UInt8 = 0, beforePrevious: UInt8 = 0, isNormal = true
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/"), previous == UInt8(ascii: "/") || (previous == UInt8(ascii: ".") && beforePrevious == UInt8(ascii: "/")) {
                isNormal = false
                break
            }
            beforePrevious = previous
            previous = byte
        }
        if isNormal, path.utf8.count > 1, previous != UInt8(ascii: "/"), !(previous == UInt8(ascii: ".") && beforePrevious == UInt8(ascii: "/")) {
            return path
        }
        let parts = path.split(separator: "/").filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }

    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` with every link and `..` resolved, for a path that may not
    /// exist yet: its deepest existing folder resolved, the rest appended.
    /// The same name before and after the path is made (a first install).
    package static func resolvedPath(_ path: String) -> String {
        let absolute = absolutePath(path)
        if let real = realPath(absolute) { return real }
        var parts = absolute.split(separator: "/").map(String.init)
        var rest: [String] = []
        while let last = parts.popLast() {
            rest.insert(last, at: 0)
            if let real = realPath("/" + parts.joined(separator: "/")) {
                return (real == "/" ? "" : real) + "/" + rest.joined(separator: "/")
            }
        }
        return absolute
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
