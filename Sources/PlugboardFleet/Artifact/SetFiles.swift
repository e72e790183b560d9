import FoundationEssentials
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// The files of one plugin set as they lie in a plugins directory: every
/// `.so`, every file of `lib/`, `plugboard.lock` and its signature. A
/// set's file names are its layers' titles; only these shapes are ever
/// written, so a hostile manifest cannot name a path outside the set.
package enum SetFiles {
    package static let lockName = "plugboard.lock"
    package static let signatureName = "plugboard.lock.minisig"

    /// What a set lacks of its lock file and signature, in words.
    package static func missing(lock: Bool, signature: Bool) -> String {
        switch (lock, signature) {
        case (false, false): "lock file and signature (\(lockName), \(signatureName))"
        case (false, true): "lock file (\(lockName))"
        default: "signature (\(signatureName))"
        }
    }

    /// Whether `title` is a name a set may hold (`NAME.so`, `lib/NAME`, the lock file and its signature).
    package static func isAllowed(_ title: String) -> Bool {
        func plain(_ name: Substring) -> Bool {
            !name.isEmpty && name.count <= 255 && !name.hasPrefix(".") && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-+".contains($0)) }
        }
        if title == lockName || title == signatureName { return true }
        let parts = title.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 1 { return plain(parts[0]) && title.hasSuffix(".so") }
        return parts.count == 2 && parts[0] == "lib" && plain(parts[1])
    }

    /// The files of the set in `directory`, by title; why not when it cannot be read.
    package static func read(_ directory: String) throws(FleetError) -> [(title: String, bytes: [UInt8])] {
        let fix = "pass the plugins directory of a locked set (`plugboard lock --plugins DIR --sign KEYFILE` writes its lock file and signature)"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw FleetError(.init("set-unreadable"), directory, reason: "cannot be read as a folder", fix: fix)
        }
        var titles = names.filter { !$0.hasPrefix(".") && ($0.hasSuffix(".so") || $0 == lockName || $0 == signatureName) }
        if let libraries = try? FileManager.default.contentsOfDirectory(atPath: directory + "/lib") {
            titles += libraries.filter { !$0.hasPrefix(".") }.map { "lib/" + $0 }
        }
        var files: [(String, [UInt8])] = []
        for title in titles.sorted() {
            guard isAllowed(title) else {
                throw FleetError(.init("set-unreadable"), directory + "/" + title, reason: "not a name a set may hold (letters, digits, . _ - +)", fix: "rename or remove it")
            }
            guard let bytes = FileManager.default.contents(atPath: directory + "/" + title) else {
                throw FleetError(.init("set-unreadable"), directory + "/" + title, reason: "cannot be read", fix: "check its permissions")
            }
            files.append((title, Array(bytes)))
        }
        return files
    }

    /// The files a lock file lists: each `.so` and `lib/` file (as a set
    /// names them) with its SHA-256 (hex).
    package static func listing(of lock: LockFile) -> [String: String] {
        var listed = Dictionary(lock.plugins.map { ($0.file, $0.sha256) }, uniquingKeysWith: { first, _ in first })
        for library in lock.libraries { listed["lib/" + library.file] = library.sha256 }
        return listed
    }

    /// The sizes a lock file signs (version 3), as a set names the files.
    package static func sizes(of lock: LockFile) -> [String: Int] {
        var sizes: [String: Int] = [:]
        for plugin in lock.plugins { if let size = plugin.size { sizes[plugin.file] = size } }
        for library in lock.libraries { if let size = library.size { sizes["lib/" + library.file] = size } }
        return sizes
    }

    /// The most a file of a set whose lock signs no sizes (version 2) may
    /// be declared: larger than any plugin, small enough to bound a liar.
    package static let unsignedSizeLimit = 512 << 20

    /// Why the files are not the set their lock file lists: every `.so`
    /// and `lib/` file listed with its hash, and nothing listed missing.
    package static func mismatch(_ files: [(title: String, sha256: String)], listed: [String: String]) -> String? {
        var listed = listed
        for file in files where file.title != lockName && file.title != signatureName {
            guard let expected = listed.removeValue(forKey: file.title) else { return "\(file.title) is not in the lock file" }
            guard expected == file.sha256 else { return "\(file.title) has SHA-256 \(file.sha256), the lock file says \(expected)" }
        }
        if let missing = listed.keys.sorted().first { return "\(missing) is in the lock file but not in the set" }
        return nil
    }

    /// The platform an ELF shared library was built for (its `e_machine`).
    package static func platform(of bytes: [UInt8]) -> Platform? {
        guard bytes.count >= 20, bytes[0] == 0x7F, bytes[1] == 0x45, bytes[2] == 0x4C, bytes[3] == 0x46 else { return nil }
        let machine = UInt16(bytes[18]) | UInt16(bytes[19]) << 8
        switch machine {
        case 62: return Platform(os: "linux", architecture: "amd64")
        case 183: return Platform(os: "linux", architecture: "arm64")
        default: return nil
        }
    }
}
