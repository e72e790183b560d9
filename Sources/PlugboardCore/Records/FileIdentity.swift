#if canImport(Glibc)
import Glibc
#endif

/// What identifies one version of a file without reading it: where it lives
/// (device, inode) and what `stat` says about its last change (size, and
/// modification and status-change times in nanoseconds).
///
/// Caught: a replacement by `mv`/`rename` (new inode), any write that changes
/// the size, and any write or `chmod`/`touch` after the previous one's
/// timestamp tick (the status-change time cannot be set back by `touch -d`,
/// so restoring the mtime does not hide a change). Not caught: a rewrite in
/// place that keeps the size and lands within the same timestamp tick as the
/// previous one (the file system's granularity, nanoseconds on ext4/xfs/tmpfs,
/// coarser on some others). The content hash taken when the file is copied
/// for loading catches that case before any code of it runs.
package struct FileIdentity: Sendable, Hashable, Codable {
    package let device: UInt64
    package let inode: UInt64
    package let size: Int64
    /// `st_mtim` in nanoseconds since the epoch.
    package let modified: Int64
    /// `st_ctim` in nanoseconds since the epoch.
    package let changed: Int64

    package init(device: UInt64, inode: UInt64, size: Int64, modified: Int64, changed: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.changed = changed
    }

    package init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
    }

    /// Encoded as `[device, inode, size, modified, changed]`: one of these per
    /// cache entry, read on every warm start.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(device)
        try container.encode(inode)
        try container.encode(size)
        try container.encode(modified)
        try container.encode(changed)
    }

    package init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        device = try container.decode(UInt64.self)
        inode = try container.decode(UInt64.self)
        size = try container.decode(Int64.self)
        modified = try container.decode(Int64.self)
        changed = try container.decode(Int64.self)
    }

    /// The identity of the file at `path` (symlinks followed), or nil.
    package static func of(path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(info)
    }
}
