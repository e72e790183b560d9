#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Checks who can change a plugin file and the folders above it
/// (``DirectoryTrust``). One check serves one discovery: folder verdicts are
/// remembered, so a directory of plugins costs one walk up to `/`.
struct OwnershipCheck {
    /// Who may own plugin files and the folders above them: root and this user.
    let user: uid_t
    private var folderVerdicts: [String: Violation?] = [:]
    private var privateGroups: [PrivateGroupKey: Bool] = [:]

    init(user: uid_t = geteuid()) {
        self.user = user
    }

    /// What makes one path unsafe.
    struct Violation: Equatable {
        enum Kind { case owner, permissions }
        let kind: Kind
        let path: String
        let owner: uid_t
        let group: gid_t
        let mode: mode_t
    }

    /// Why the file at `path` (resolving to `resolved`, found in `folder`) may
    /// not be trusted as code; nil when it may.
    mutating func problem(path: String, resolved: String, folder: String, trusted: [String]) -> PluginLoadError? {
        let roots = ([folder] + trusted).map(PluginDirectory.absolutePath)
        // A plain entry's path keeps the folder as given; a symlink's is real.
        let realRoots = roots.map { PluginDirectory.realPath($0) ?? $0 }
        guard let root = Self.root(containing: resolved, among: zip(roots, realRoots).map { [$0, $1] }) else {
            return .untrustedSymlink(path: path, target: resolved, trusted: realRoots)
        }
        guard let realFile = PluginDirectory.realPath(resolved) else { return nil }  // gone: reported when read
        if let violation = Self.violation(at: realFile, user: user, stickyAllowed: false, privateGroup: { isPrivateGroup($0, of: $1) }) {
            return .unsafe(path: path, violation: violation, user: user, isFile: true)
        }
        let realRoot = PluginDirectory.realPath(root) ?? root
        var folder = Self.parent(of: realFile)
        while true {
            // Other users may add entries to a sticky folder above the trusted
            // one (/tmp) but not replace ours; the trusted folder itself
            // must be theirs to write to.
            let aboveRoot = folder != realRoot && !folder.hasPrefix(realRoot == "/" ? "/" : realRoot + "/")
            if let violation = verdict(for: folder, stickyAllowed: aboveRoot) {
                return .unsafe(path: path, violation: violation, user: user, isFile: false)
            }
            if folder == "/" { return nil }
            folder = Self.parent(of: folder)
        }
    }

    /// Why the file at `path` (a lock file, an interface library) may not be trusted; nil when it may.
    mutating func problem(file path: String) -> PluginLoadError? {
        let folder = Self.parent(of: PluginDirectory.absolutePath(path))
        return problem(path: path, resolved: PluginDirectory.realPath(path) ?? path, folder: folder, trusted: [])
    }

    private mutating func verdict(for folder: String, stickyAllowed: Bool) -> Violation? {
        let key = stickyAllowed ? folder : folder + "\u{0}root"
        if let known = folderVerdicts[key] { return known }
        let found = Self.violation(at: folder, user: user, stickyAllowed: stickyAllowed) { isPrivateGroup($0, of: $1) }
        folderVerdicts[key] = found
        return found
    }

    private static func violation(
        at path: String, user: uid_t, stickyAllowed: Bool, privateGroup: (gid_t, uid_t) -> Bool
    ) -> Violation? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }  // vanished: reading it reports that
        if info.st_uid != 0 && info.st_uid != user {
            return Violation(kind: .owner, path: path, owner: info.st_uid, group: info.st_gid, mode: info.st_mode)
        }
        let sticky = (info.st_mode & S_ISVTX) != 0 && (info.st_mode & S_IFMT) == S_IFDIR
        if stickyAllowed && sticky { return nil }
        let others = (info.st_mode & S_IWOTH) != 0
        let group = (info.st_mode & S_IWGRP) != 0 && !privateGroup(info.st_gid, info.st_uid)
        if others || group {
            return Violation(kind: .permissions, path: path, owner: info.st_uid, group: info.st_gid, mode: info.st_mode)
        }
        return nil
    }

    private struct PrivateGroupKey: Hashable {
        let group: gid_t
        let owner: uid_t
    }

    /// Whether `group` holds only `owner` (Debian's user-private groups, as
    /// Debian's sshd allows): its name is the owner's, it lists no other
    /// member, and no other user has it as primary group.
    private mutating func isPrivateGroup(_ group: gid_t, of owner: uid_t) -> Bool {
        let key = PrivateGroupKey(group: group, owner: owner)
        if let known = privateGroups[key] { return known }
        let answer = Self.userDatabase.withLock { _ in Self.holdsOnly(owner, group) }
        privateGroups[key] = answer
        return answer
    }

    /// getpwent walks one process-wide cursor and getpwuid/getgrgid return
    /// static buffers: one reader at a time.
    static let userDatabase = Mutex(())

    private static func holdsOnly(_ owner: uid_t, _ group: gid_t) -> Bool {
        guard let user = getpwuid(owner), user.pointee.pw_gid == group, let entry = getgrgid(group) else { return false }
        let name = String(cString: user.pointee.pw_name)
        guard String(cString: entry.pointee.gr_name) == name else { return false }
        var member = entry.pointee.gr_mem
        while let current = member?.pointee {
            if String(cString: current) != name { return false }
            member = member?.advanced(by: 1)
        }
        setpwent()
        defer { endpwent() }
        while let other = getpwent() {
            if other.pointee.pw_gid == group && other.pointee.pw_uid != owner { return false }
        }
        return true
    }

    /// The first of `roots` (each given as written and resolved) holding `path`.
    private static func root(containing path: String, among roots: [[String]]) -> String? {
        for forms in roots {
            for root in forms where path.hasPrefix(root == "/" ? "/" : root + "/") { return forms[1] }
        }
        return nil
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}

extension OwnershipCheck.Violation {
    var modeText: String { "0" + String(mode & 0o7777, radix: 8) }
    var ownerText: String { Self.name(ofUser: owner).map { "\(owner) (\($0))" } ?? "\(owner)" }
    var groupText: String { Self.name(ofGroup: group).map { "\(group) (\($0))" } ?? "\(group)" }

    static func name(ofUser id: uid_t) -> String? {
        OwnershipCheck.userDatabase.withLock { _ in getpwuid(id).map { String(cString: $0.pointee.pw_name) } }
    }

    static func name(ofGroup id: gid_t) -> String? {
        OwnershipCheck.userDatabase.withLock { _ in getgrgid(id).map { String(cString: $0.pointee.gr_name) } }
    }
}

extension PluginLoadError {
    static func unsafe(path: String, violation: OwnershipCheck.Violation, user: uid_t, isFile: Bool) -> PluginLoadError {
        let what = isFile ? "the file" : "its folder \(violation.path)"
        let userName = OwnershipCheck.Violation.name(ofUser: user) ?? "\(user)"
        let optOut = "(on a development machine, --allow-unsafe-directories or DirectoryTrust.unenforced turns these checks off)"
        switch violation.kind {
        case .owner:
            let users = user == 0 ? "root" : "root or \(userName)"
            return PluginLoadError(code: .unsafeOwner, path: path, reason:
                "not loaded: \(what) is owned by user \(violation.ownerText), not by \(users) (the user running this host), "
                + "so another user can change the code this host would run; fix: `chown \(userName) '\(violation.path)'` "
                + "or move the plugin to a folder you own \(optOut)")
        case .permissions:
            return PluginLoadError(code: .unsafePermissions, path: path, reason:
                "not loaded: \(what) can be written by other users (owner \(violation.ownerText), group \(violation.groupText), "
                + "mode \(violation.modeText)), so they can change the code this host would run; fix: "
                + "`chmod go-w '\(violation.path)'` \(optOut)")
        }
    }

    static func untrustedSymlink(path: String, target: String, trusted: [String]) -> PluginLoadError {
        PluginLoadError(code: .untrustedSymlink, path: path, reason:
            "not loaded: a symlink to \(target), outside the trusted directories (\(trusted.joined(separator: ", "))); "
            + "fix: copy the plugin into the plugins directory, or add its folder to DirectoryTrust.trustedDirectories")
    }
}
