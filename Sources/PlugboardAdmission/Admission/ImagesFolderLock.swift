import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// Makes a host's own images folder and holds a lock in it for the life of
/// the host, so a later host can tell a folder whose owner is gone (its
/// lock is free) from a live one, whatever became of the process id, and
/// remove what a crashed or killed host left behind (copies of every plugin
/// it loaded).
///
/// The folder is made under a hidden name, its lock file created and
/// locked inside, then renamed into place: a folder under the final name
/// always has a lock file, held from before anyone could see it.
final class ImagesFolderLock: Sendable {
    /// The lock file's name inside each images folder.
    static let fileName = ".owner.lock"
    /// Folders of hosts are named `<prefix><pid>-<random>`.
    static let prefix = "plugboard-images-"

    private let held = Mutex<Int32>(-1)

    init() {}

    /// Makes `folder` (a new name) with its lock held, unless it exists;
    /// the first time, removes the folders beside it whose owners are gone.
    /// nil on success, else the reason.
    func makeOnce(_ folder: String) -> String? {
        held.withLock { fd -> String? in
            if fd >= 0 { return nil }
            let parent = OwnershipCheck.parent(of: folder)
            if let failed = makeDirectories(parent) {
                return "cannot create \(failed.path): \(String(cString: strerror(failed.errno)))"
            }
            let hidden = parent + "/." + String(folder.split(separator: "/").last ?? "images") + ".making"
            guard mkdir(hidden, 0o700) == 0 else { return "cannot create \(hidden): \(String(cString: strerror(errno)))" }
            let lock = open(hidden + "/" + Self.fileName, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0, rename(hidden, folder) == 0 else {
                let reason = String(cString: strerror(errno))
                if lock >= 0 { close(lock) }
                try? FileManager.default.removeItem(atPath: hidden)
                return "cannot create \(folder): \(reason)"
            }
            fd = lock
            Self.removeAbandoned(in: parent, except: folder)
            return nil
        }
    }

    /// Lets the lock go (after the folder was removed).
    func release() {
        held.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    deinit { release() }

    /// Removes the images folders in `parent` that belong to this user and
    /// whose lock nobody holds: their hosts are gone. A folder without a
    /// lock file (made by a version before this one) is left alone: nothing
    /// tells whether its owner lives.
    static func removeAbandoned(in parent: String, except own: String) {
        // The parent is often the shared temp directory, with thousands of
        // entries: read it with readdir and compare the prefix in place, so
        // only images folders become strings (contentsOfDirectory made one
        // per entry, and the first activation paid for all of them).
        guard let directory = opendir(parent) else { return }
        defer { closedir(directory) }
        var names: [String] = []
        let prefixLength = prefix.utf8.count
        while let entry = readdir(directory) {
            let matches = withUnsafePointer(to: entry.pointee.d_name) { name in
                name.withMemoryRebound(to: CChar.self, capacity: 256) { strncmp($0, prefix, prefixLength) == 0 ? String(cString: $0) : nil }
            }
            if let matches { names.append(matches) }
        }
        for name in names {
            let folder = parent + "/" + name
            var info = stat()
            guard folder != own, lstat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid() else { continue }
            let lock = open(folder + "/" + fileName, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard lock >= 0 else { continue }
            defer { close(lock) }
            // Free: its host is gone (a live host holds it from before the folder had its name).
            guard flock(lock, LOCK_EX | LOCK_NB) == 0 else { continue }
            try? FileManager.default.removeItem(atPath: folder)
        }
    }
}
