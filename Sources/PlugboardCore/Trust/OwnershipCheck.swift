import CPlugboardHost
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Checks who can change a plugin file and the folders above it
/// (``DirectoryTrust``). One check serves one discovery: folder verdicts are
/// remembered, so a directory of plugins costs one walk up to `/`.
package struct OwnershipCheck {
    /// Who may own plugin files and the folders above them: root and this user.
    let user: uid_t
    private var folderVerdicts: [String: Violation?] = [:]
    private var privateGroups: [PrivateGroupKey: Bool] = [:]
    /// The trusted folders' real paths: the same few for every file of a discovery.
    private var realFolders: [String: String] = [:]
    /// The roots of the last folder checked: every file of a discovery has the same.
    private var lastRoots: (folder: String, trusted: [String], forms: [[String]], real: [String])?
    /// Whole walks up to `/`, by where they start and what they may not be
    /// sticky below: a folder of plugins is walked once, not once per file.
    private var chainVerdicts: [ChainKey: Violation?] = [:]
    /// The last walk asked of the real folders, and of the folders as given (links checked).
    private var lastRealChain: (key: ChainKey, verdict: Violation?)?
    private var lastLinkedChain: (key: ChainKey, verdict: Violation?)?
    private var lastRealFolder: (path: String, real: String)?

    private struct ChainKey: Hashable {
        let start: String
        let anchor: String
        let links: Bool
    }

    package init(user: uid_t = geteuid()) {
        self.user = user
    }

    /// What makes one path unsafe.
    struct Violation: Equatable {
        package enum Kind: Equatable {
            case owner, permissions
            /// It could not be examined (`errno`): unsafe until it can.
            case unverifiable(Int32)
        }
        let kind: Kind
        let path: String
        var owner: uid_t = 0
        var group: gid_t = 0
        var mode: mode_t = 0
    }

    /// Why the file at `path` (resolving to `resolved`, found in `folder`) may
    /// not be trusted as code; nil when it may.
    mutating func problem(path: String, resolved: String, folder: String, trusted: [String]) -> PluginLoadError? {
        if case let .failure(problem) = check(path: path, resolved: resolved, folder: folder, trusted: trusted) { return problem }
        return nil
    }

    /// The file's real path, once it and every folder on the way to it passed;
    /// read the file through it, not through the path as given, whose links
    /// may lead through folders this check did not walk. `listed`: what
    /// `lstat` said of `resolved` when it is a plain file, already read.
    package mutating func check(path: String, resolved: String, folder: String, trusted: [String], listed: stat? = nil) -> Result<String, PluginLoadError> {
        assert(listed == nil || resolved == path, "a listed stat is of the path itself, a plain file")
        let (forms, realRoots) = roots(folder: folder, trusted: trusted)
        guard let root = Self.root(containing: resolved, among: forms) else {
            return .failure(.untrustedSymlink(path: path, target: resolved, trusted: realRoots))
        }
        // Whatever cannot be examined is refused: a folder renamed away
        // during the check must not skip it.
        guard let (realFile, plain) = realFile(resolved, listed: listed) else {
            return .failure(.unsafe(path: path, violation: Violation(kind: .unverifiable(errno), path: resolved), user: user, isFile: true))
        }
        if let violation = violation(at: realFile, stickyAllowed: false, links: false, known: plain) {
            return .failure(.unsafe(path: path, violation: violation, user: user, isFile: true))
        }
        // Both chains: the folders the file really is in, and the folders of
        // the path as given, whose symlinks (`/opt/plugins -> /srv/plugins`)
        // whoever can write `/opt` could point elsewhere.
        // A symlink on the path as given belongs to whoever made it, who can
        // replace it even in a sticky folder: its owner is checked too.
        // `root` is real already (one of `realRoots`).
        let given = forms[0][0]
        if let violation = chain(from: Self.parent(of: realFile), below: root, links: false)
            ?? chain(from: Self.parent(of: PluginDirectory.absolutePath(path)), below: given, links: true) {
            return .failure(.unsafe(path: path, violation: violation, user: user, isFile: false))
        }
        return .success(realFile)
    }

    /// The trusted folders as given and real (a plain entry's path keeps the
    /// folder as given; a symlink's is real), and the real ones alone.
    private mutating func roots(folder: String, trusted: [String]) -> (forms: [[String]], real: [String]) {
        if let last = lastRoots, last.folder == folder, last.trusted == trusted { return (last.forms, last.real) }
        let roots = ([folder] + trusted).map(PluginDirectory.absolutePath)
        let real = roots.map { realFolder($0) }
        let forms = zip(roots, real).map { [$0, $1] }
        lastRoots = (folder, trusted, forms, real)
        return (forms, real)
    }

    /// The first unsafe folder from `start` up to `/`, sticky folders allowed above `anchor`.
    private mutating func chain(from start: String, below anchor: String, links: Bool) -> Violation? {
        let key = ChainKey(start: start, anchor: anchor, links: links)
        // Each file asks the same two walks as the one before it: compared before hashed.
        if let last = links ? lastLinkedChain : lastRealChain, last.key == key { return last.verdict }
        let found: Violation?
        if let known = chainVerdicts[key] {
            found = known
        } else {
            found = firstUnsafeFolder(from: start, links: links, stickyAllowed: { Self.isAbove($0, anchor) })
            chainVerdicts[key] = found
        }
        if links { lastLinkedChain = (key, found) } else { lastRealChain = (key, found) }
        return found
    }

    /// Why the file at `path` (a lock file, an interface library) may not be trusted; nil when it may.
    package mutating func problem(file path: String) -> PluginLoadError? {
        let folder = Self.parent(of: PluginDirectory.absolutePath(path))
        return problem(path: path, resolved: PluginDirectory.realPath(path) ?? path, folder: folder, trusted: [])
    }

    /// Why the folder `path`, made first if missing, may not be used for what
    /// steers the host (the cache, the journal, an images directory): it
    /// cannot be made, or fails ``problem(folder:)``. nil when it may.
    package static func problem(makingFolder path: String) -> String? {
        if let failed = makeDirectories(path) {
            return "cannot create \(failed.path): \(String(cString: strerror(failed.errno)))"
        }
        var ownership = OwnershipCheck()
        return ownership.problem(folder: path)
    }

    /// Why the folder `path` may not hold code the host loads (the images
    /// directory): the folder itself strictly, the folders above it as for plugins.
    package mutating func problem(folder path: String) -> String? {
        let given = PluginDirectory.absolutePath(path)
        let real = PluginDirectory.realPath(given) ?? given
        guard let violation = firstUnsafeFolder(from: real, links: false, stickyAllowed: { $0 != real })
            ?? firstUnsafeFolder(from: given, links: true, stickyAllowed: { $0 != given }) else { return nil }
        return PluginLoadError.unsafe(path: path, violation: violation, user: user, isFile: false).reason
    }

    /// The first unsafe folder from `start` up to `/`. Other users may add
    /// entries to a sticky folder above the trusted one (/tmp) but not
    /// replace ours, so `stickyAllowed` folders pass with the sticky bit; the
    /// trusted folder itself must be theirs alone to write to.
    private mutating func firstUnsafeFolder(from start: String, links: Bool, stickyAllowed: (String) -> Bool) -> Violation? {
        var current = start
        while true {
            if let violation = verdict(for: current, stickyAllowed: stickyAllowed(current), links: links) { return violation }
            if current == "/" { return nil }
            current = Self.parent(of: current)
        }
    }

    /// Whether `folder` lies above `root` (neither it nor inside it).
    private static func isAbove(_ folder: String, _ root: String) -> Bool {
        folder != root && !folder.hasPrefix(root == "/" ? "/" : root + "/")
    }

    /// The real path of a file: its folder's (cached per folder), then its
    /// name, when the file itself is not a symlink; `realpath` (a `readlink`
    /// per component) only for a symlink. Nil when it cannot be examined.
    /// With the real path, what `lstat` said of a file that is not a
    /// symlink (`listed`: the directory walk's, made just before), so its
    /// check needs no second `stat` (one system call per installed plugin of
    /// every start). Like the real folders cached for the discovery, it is a
    /// moment's view: a folder link changed after it by whoever may change
    /// the folders above is not seen, and the bytes are admitted again,
    /// read through the real path, when the plugin activates.
    private mutating func realFile(_ path: String, listed: stat?) -> (String, stat?)? {
        var link = stat()
        if let listed {
            link = listed
        } else {
            guard lstat(path, &link) == 0 else { return nil }
        }
        guard (link.st_mode & S_IFMT) != S_IFLNK, let slash = lastSlash(in: path), slash != path.startIndex else {
            return PluginDirectory.realPath(path).map { ($0, nil) }
        }
        return (realFolder(String(path[..<slash])) + path[slash...], link)
    }

    private mutating func realFolder(_ path: String) -> String {
        // A folder's files come one after another: compared before hashed.
        if let last = lastRealFolder, last.path == path { return last.real }
        let real: String
        if let known = realFolders[path] {
            real = known
        } else {
            real = PluginDirectory.realPath(path) ?? path
            realFolders[path] = real
        }
        lastRealFolder = (path, real)
        return real
    }

    private mutating func verdict(for folder: String, stickyAllowed: Bool, links: Bool) -> Violation? {
        let key = "\(folder)\u{0}\(stickyAllowed)\(links)"
        if let known = folderVerdicts[key] { return known }
        let found = violation(at: folder, stickyAllowed: stickyAllowed, links: links)
        folderVerdicts[key] = found
        return found
    }

    /// `known`: what `stat` would say of `path`, already read.
    private mutating func violation(at path: String, stickyAllowed: Bool, links: Bool, known: stat? = nil) -> Violation? {
        var info = stat()
        if links, lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK, info.st_uid != 0 && info.st_uid != user {
            return Violation(kind: .owner, path: path, owner: info.st_uid, group: info.st_gid, mode: info.st_mode)
        }
        if let known {
            info = known
        } else {
            guard stat(path, &info) == 0 else { return Violation(kind: .unverifiable(errno), path: path) }
        }
        if info.st_uid != 0 && info.st_uid != user {
            return Violation(kind: .owner, path: path, owner: info.st_uid, group: info.st_gid, mode: info.st_mode)
        }
        let sticky = (info.st_mode & S_ISVTX) != 0 && (info.st_mode & S_IFMT) == S_IFDIR
        if stickyAllowed && sticky { return nil }
        let others = (info.st_mode & S_IWOTH) != 0
        // With an access control list, the group bits are its mask: a named
        // user or group the list lets write voids the exception.
        let group = (info.st_mode & S_IWGRP) != 0
            && (Self.hasAccessControlList(path) || !isPrivateGroup(info.st_gid, of: info.st_uid))
        if others || group {
            return Violation(kind: .permissions, path: path, owner: info.st_uid, group: info.st_gid, mode: info.st_mode)
        }
        return nil
    }

    private static func hasAccessControlList(_ path: String) -> Bool {
        plugboard_acl_grants_named_write(path) != 0
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

    /// getpwent walks one process-wide cursor: one walk at a time here
    /// (other code in the process that walks it is not covered).
    static let userDatabase = Mutex(())

    private static func holdsOnly(_ owner: uid_t, _ group: gid_t) -> Bool {
        guard let user = userRecord(owner), user.group == group, let entry = groupRecord(group),
              entry.name == user.name, entry.members.allSatisfy({ $0 == user.name }) else { return false }
        setpwent()
        defer { endpwent() }
        while let other = getpwent() {
            if other.pointee.pw_gid == group && other.pointee.pw_uid != owner { return false }
        }
        return true
    }

    /// A user's name and primary group (getpwuid_r: no shared buffer).
    static func userRecord(_ id: uid_t) -> (name: String, group: gid_t)? {
        var record = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(id, &record, &buffer, buffer.count, &found) == 0, found != nil else { return nil }
        return (String(cString: record.pw_name), record.pw_gid)
    }

    /// A group's name and listed members (getgrgid_r: no shared buffer).
    static func groupRecord(_ id: gid_t) -> (name: String, members: [String])? {
        var record = group()
        var found: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 65_536)
        guard getgrgid_r(id, &record, &buffer, buffer.count, &found) == 0, found != nil else { return nil }
        var members: [String] = []
        var member = record.gr_mem
        while let current = member?.pointee {
            members.append(String(cString: current))
            member = member?.advanced(by: 1)
        }
        return (String(cString: record.gr_name), members)
    }

    /// The first of `roots` (each given as written and resolved) holding `path`.
    private static func root(containing path: String, among roots: [[String]]) -> String? {
        for forms in roots {
            for root in forms where path.hasPrefix(root == "/" ? "/" : root + "/") { return forms[1] }
        }
        return nil
    }

    package static func parent(of path: String) -> String {
        // On the UTF-8 view: a Character search was a tenth of a warm start of 2,000.
        guard let slash = lastSlash(in: path), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}

extension OwnershipCheck.Violation {
    var modeText: String { "0" + String(mode & 0o7777, radix: 8) }
    var ownerText: String { Self.name(ofUser: owner).map { "\(owner) (\($0))" } ?? "\(owner)" }
    var groupText: String { Self.name(ofGroup: group).map { "\(group) (\($0))" } ?? "\(group)" }

    static func name(ofUser id: uid_t) -> String? { OwnershipCheck.userRecord(id)?.name }

    static func name(ofGroup id: gid_t) -> String? { OwnershipCheck.groupRecord(id)?.name }
}

extension PluginLoadError {
    static func unsafe(path: String, violation: OwnershipCheck.Violation, user: uid_t, isFile: Bool) -> PluginLoadError {
        let what = isFile ? "the file" : "its folder \(violation.path)"
        let userName = OwnershipCheck.Violation.name(ofUser: user) ?? "\(user)"
        let optOut = "(on a development machine, --allow-unsafe-directories or DirectoryTrust.unenforced turns these checks off)"
        switch violation.kind {
        case let .unverifiable(error):
            return .unreadable(path: path, reason: "cannot check who can change \(isFile ? "it" : "its folder \(violation.path)") "
                + "(\(String(cString: strerror(error)))), so it is not loaded; check that the path exists and can be searched")
        case .owner:
            let users = user == 0 ? "root" : "root or \(userName)"
            return PluginLoadError(code: .unsafeOwner, path: path, reason:
                "not loaded: \(what) is owned by user \(violation.ownerText) (mode \(violation.modeText)), not by \(users) (the user running this host), "
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
