import Foundation

/// Where each generation of a reloaded plugin is copied before loading.
///
/// The dynamic loader caches images by path and inode, and overwriting a
/// mapped file in place corrupts the running code, so every generation is
/// loaded from its own copy with a unique name. Images stay mapped for the
/// life of the process (Swift images cannot be unloaded); the copies of the
/// default per-process directory are unlinked at shutdown, which leaves the
/// mappings intact.
struct GenerationFiles: Sendable {
    let directory: String
    /// Whether the directory is this process's own (default), removed at shutdown.
    let isPrivate: Bool

    init(directory: String? = nil) {
        isPrivate = directory == nil
        // Normalised: /proc/self/maps names files by their exact path.
        self.directory = PluginDirectory.absolutePath(directory ?? (FileManager.default.temporaryDirectory.path + "/plugboard-generations-\(getpid())"))
    }

    /// Copies `source` for `generation` of `pluginID`; returns the copy's path.
    func copy(_ source: String, pluginID: String, generation: Int) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let name = "\(pluginID)-gen\(generation)-\(UInt32.random(in: 0...UInt32.max)).so"
        let target = "\(directory)/\(name)"
        let temporary = target + ".partial"
        try FileManager.default.copyItem(atPath: source, toPath: temporary)
        // Renamed into place whole: nobody ever maps a half-copied file.
        guard rename(temporary, target) == 0 else { throw CocoaError(.fileWriteUnknown) }
        return target
    }

    /// Removes the copies of a private directory. Safe while their images are
    /// mapped: unlinking a file never unmaps it.
    func removeIfPrivate() {
        if isPrivate { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Bytes of address space mapped from `path` (what loading it added).
    static func mappedBytes(of path: String) -> Int {
        guard let maps = procSelfMaps() else { return 0 }
        var total = 0
        for line in maps.split(separator: "\n") where line.hasSuffix(path) {
            let range = line.prefix { $0 != " " }.split(separator: "-")
            if range.count == 2, let start = Int(range[0], radix: 16), let end = Int(range[1], radix: 16) {
                total += end - start
            }
        }
        return total
    }

    /// `/proc/self/maps` (Foundation's file reading trusts stat's size, 0 here).
    static func procSelfMaps() -> String? {
        let fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return readToEnd(fd).map { String(decoding: $0, as: UTF8.self) }
    }
}
