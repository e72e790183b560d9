import FoundationEssentials
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// An OCI image layout as one tar file (`plugboard export REF FILE.tar`),
/// as `oras` and `skopeo` also write it: POSIX ustar, the layout's files at
/// its root. Extraction takes only the names a layout has (`oci-layout`,
/// `index.json`, `blobs/sha256/HEX`), regular files and folders, nothing
/// else: an archive is as untrusted as a registry.
package enum LayoutArchive {
    /// Whether `path` names an archive rather than a layout folder.
    package static func isArchive(_ path: String) -> Bool {
        var info = stat()
        if stat(path, &info) == 0 { return info.st_mode & S_IFMT == S_IFREG }
        return path.hasSuffix(".tar")
    }

    private static func failure(_ path: String, _ reason: String) -> FleetError {
        FleetError(.layoutInvalid, path, reason: reason, fix: "export the set again (`plugboard export REF FILE.tar`)")
    }

    /// Writes the layout in `folder` as the tar file `file` (whole, then renamed into place).
    package static func write(folder: String, to file: String) throws(FleetError) {
        var names = ["oci-layout", "index.json"]
        let blobs = ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/blobs/sha256")) ?? []).filter { !$0.hasPrefix(".") }.sorted()
        names += blobs.map { "blobs/sha256/" + $0 }
        let partial = file + ".partial-\(getpid())"
        let out = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard out >= 0 else { throw FleetError(.installFailed, file, reason: String(cString: strerror(errno)), fix: "pass a path this user can write") }
        var ok = true
        ok = ok && entry(out, name: "blobs/", size: 0, directory: true) && entry(out, name: "blobs/sha256/", size: 0, directory: true)
        for name in names where ok {
            guard let bytes = FileManager.default.contents(atPath: folder + "/" + name) else { ok = false; break }
            ok = entry(out, name: name, size: bytes.count, directory: false)
                && bytes.withUnsafeBytes { writeAll(out, $0) }
                && padding(out, bytes.count)
        }
        // Two zero blocks end an archive.
        ok = ok && [UInt8](repeating: 0, count: 1024).withUnsafeBytes { writeAll(out, $0) } && fsync(out) == 0
        let reason = String(cString: strerror(errno))
        close(out)
        guard ok, rename(partial, file) == 0 else {
            unlink(partial)
            throw FleetError(.installFailed, file, reason: "cannot write the archive: \(reason)", fix: "free space where it is written")
        }
    }

    private static func entry(_ out: Int32, name: String, size: Int, directory: Bool) -> Bool {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, at offset: Int) { for (index, byte) in text.utf8.enumerated() { header[offset + index] = byte } }
        func octal(_ value: Int, width: Int) -> String {
            let digits = String(value, radix: 8)
            return String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits
        }
        put(name, at: 0)
        put(octal(directory ? 0o755 : 0o644, width: 8), at: 100)
        put(octal(0, width: 8), at: 108)
        put(octal(0, width: 8), at: 116)
        put(octal(size, width: 12), at: 124)
        put(octal(0, width: 12), at: 136)
        header[156] = directory ? UInt8(ascii: "5") : UInt8(ascii: "0")
        put("ustar", at: 257)
        put("00", at: 263)
        for index in 148..<156 { header[index] = UInt8(ascii: " ") }
        let sum = header.reduce(0) { $0 + Int($1) }
        put(octal(sum, width: 7), at: 148)
        header[155] = UInt8(ascii: " ")
        return header.withUnsafeBytes { writeAll(out, $0) }
    }

    private static func padding(_ out: Int32, _ size: Int) -> Bool {
        let rest = (512 - size % 512) % 512
        return rest == 0 || [UInt8](repeating: 0, count: rest).withUnsafeBytes { writeAll(out, $0) }
    }

    /// Extracts the layout in the archive `file` into the empty folder `folder`.
    package static func extract(_ file: String, into folder: String) throws(FleetError) {
        let input = open(file, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw failure(file, "cannot be read: \(String(cString: strerror(errno)))") }
        defer { close(input) }
        func readExactly(_ count: Int) -> [UInt8]? { LocalFiles.readExactly(input, count) }
        guard mkdir(folder + "/blobs", 0o755) == 0 || errno == EEXIST, mkdir(folder + "/blobs/sha256", 0o755) == 0 || errno == EEXIST else {
            throw FleetError(.installFailed, folder, reason: String(cString: strerror(errno)), fix: "free space for the staging folder")
        }
        while true {
            guard let header = readExactly(512) else { throw failure(file, "ends inside an entry (cut short)") }
            if header.allSatisfy({ $0 == 0 }) { return }
            let stored = header[148..<156].prefix { $0 != 0 && $0 != 32 }
            var sum = header.reduce(0) { $0 + Int($1) }
            sum -= header[148..<156].reduce(0) { $0 + Int($1) }
            sum += 8 * 32
            guard let checksum = Int(String(decoding: stored, as: UTF8.self), radix: 8), checksum == sum else {
                throw failure(file, "a header's checksum is wrong: not a tar archive, or damaged")
            }
            var name = String(decoding: header[0..<100].prefix { $0 != 0 }, as: UTF8.self)
            let prefix = String(decoding: header[345..<500].prefix { $0 != 0 }, as: UTF8.self)
            if !prefix.isEmpty { name = prefix + "/" + name }
            if name.hasPrefix("./") { name = String(name.dropFirst(2)) }
            let sizeText = String(decoding: header[124..<136].prefix { $0 != 0 && $0 != 32 }, as: UTF8.self)
            guard let size = Int(sizeText.isEmpty ? "0" : sizeText, radix: 8), size >= 0 else { throw failure(file, "an entry's size cannot be read") }
            let type = header[156]
            if type == UInt8(ascii: "5") {
                guard ["", "blobs", "blobs/", "blobs/sha256", "blobs/sha256/", "."].contains(name) else { throw failure(file, "holds the folder '\(name)', which a layout has not") }
                continue
            }
            guard type == UInt8(ascii: "0") || type == 0 else { throw failure(file, "'\(name)' is not a regular file (links and devices are refused)") }
            let isBlob = name.hasPrefix("blobs/sha256/") && Digest.isValid("sha256:" + name.dropFirst(13))
            guard name == "oci-layout" || name == "index.json" || isBlob else { throw failure(file, "holds '\(name)', which a layout has not") }
            let target = folder + "/" + name
            let out = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
            guard out >= 0 else { throw failure(file, "'\(name)' is there twice, or cannot be written: \(String(cString: strerror(errno)))") }
            defer { close(out) }
            var left = size
            while left > 0 {
                guard let chunk = readExactly(min(left, 1 << 20)) else { throw failure(file, "ends inside '\(name)' (cut short)") }
                guard chunk.withUnsafeBytes({ writeAll(out, $0) }) else {
                    throw FleetError(.installFailed, target, reason: String(cString: strerror(errno)), fix: "free space for the staging folder")
                }
                left -= chunk.count
            }
            if size % 512 != 0, readExactly(512 - size % 512) == nil { throw failure(file, "ends inside '\(name)' (cut short)") }
        }
    }
}
