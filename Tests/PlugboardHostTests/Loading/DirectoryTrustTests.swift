import Foundation
import Plugboard
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Testing

/// Safe directories: a plugin file is code, so the host loads it only when no
/// other user can change it or a folder above it (sshd's StrictModes). Each
/// test sets the modes it needs explicitly (the machine's umask does not
/// matter), asserts the code, and that the good plugin beside it still loads.
@Suite struct DirectoryTrustTests {
    static let isRoot = geteuid() == 0
    /// A group that is not this user's private group, for a group-writable
    /// file: root may give files any group; others need a second group of theirs.
    static let foreignGroup: gid_t? = {
        if isRoot { return 65534 }
        var groups = [gid_t](repeating: 0, count: 64)
        let count = getgroups(Int32(groups.count), &groups)
        return groups.prefix(Int(max(count, 0))).first { $0 != getegid() }
    }()

    /// Whether this user's primary group holds only this user, read from
    /// /etc/passwd and /etc/group (Debian's user-private groups).
    static let hasPrivateGroup: Bool = {
        let passwd = (try? String(contentsOfFile: "/etc/passwd", encoding: .utf8)) ?? ""
        let group = (try? String(contentsOfFile: "/etc/group", encoding: .utf8)) ?? ""
        let users = passwd.split(separator: "\n").map { $0.split(separator: ":", omittingEmptySubsequences: false) }.filter { $0.count > 3 }
        guard let me = users.first(where: { $0[2] == "\(geteuid())" }) else { return false }
        let sharers = users.filter { $0[3] == me[3] }
        let entry = group.split(separator: "\n").map { $0.split(separator: ":", omittingEmptySubsequences: false) }.first { $0.count > 3 && $0[2] == me[3] }
        guard let entry, entry[0] == me[0], sharers.count == 1 else { return false }
        return entry[3].isEmpty || entry[3] == me[0]
    }()

    /// The registry cache and crash journal of the hosts a test makes (a
    /// suite value is made per test, so each test has its own).
    let cache: TemporaryDirectory

    init() throws {
        cache = try TemporaryDirectory("plugboard-cache")
    }

    /// A host; the caller shuts it down.
    func host(trust: DirectoryTrust = .enforced) -> PluginHost {
        let host = PluginHost(configuration: .with(cacheDirectory: cache.path, trust: trust))
        host.declare(Commands.self)
        return host
    }

    /// A good plugin in a folder of its own, and `bad` loaded beside it; the
    /// caller shuts the host down.
    func load(_ bad: String, trust: DirectoryTrust = .enforced) throws -> (bad: PluginRecord, host: PluginHost) {
        let good = try TemporaryDirectory()
        let goodFile = try good.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        let host = host(trust: trust)
        let records = host.load(files: [goodFile, bad])
        #expect(host.activePluginIDs.contains("fixture.alpha"), "the good plugin still loads")
        return (records[1], host)
    }

    @Test(.enabled(if: foreignGroup != nil, "needs a group other than the user's own: root, or a user in a second group"))
    func aGroupWritablePluginFileIsRefused() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.copy(Fixtures.library("Beta"), as: "libBeta.so")
        #expect(chown(file, geteuid(), Self.foreignGroup!) == 0)
        chmod(file, 0o775)
        let (bad, host) = try load(file)
        defer { host.shutdown() }
        #expect(bad.code == "unsafe-permissions")
        #expect(bad.reason?.contains("the file can be written by other users") == true, "\(bad.reason ?? "")")
        #expect(bad.reason?.contains("mode 0775") == true && bad.reason?.contains("chmod go-w '\(file)'") == true)
        #expect(!host.activePluginIDs.contains("fixture.beta"))
    }

    @Test(.enabled(if: hasPrivateGroup, "this user's primary group is not a private one (Debian's user-private groups)"))
    func aFileWritableByTheOwnersPrivateGroupIsAllowed() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.copy(Fixtures.library("Beta"), as: "libBeta.so")
        #expect(chown(file, geteuid(), getegid()) == 0)
        chmod(file, 0o775)
        let (record, host) = try load(file)
        defer { host.shutdown() }
        #expect(record.status == .active, "\(record.reason ?? "")")
    }

    /// `PARENT/plugins/libBeta.so` with PARENT of `mode`, the rest safe.
    func pluginInSafeFolder(under mode: mode_t) throws -> (parent: TemporaryDirectory, file: String) {
        let parent = try TemporaryDirectory()
        chmod(parent.path, mode)
        let folder = parent.path + "/plugins"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        chmod(folder, 0o755)
        let file = folder + "/libBeta.so"
        try FileManager.default.copyItem(atPath: try Fixtures.library("Beta").path, toPath: file)
        chmod(file, 0o755)
        return (parent, file)
    }

    /// A file of the owner's private group that an access control list lets
    /// another user write: the group bits are the list's mask, so the
    /// private-group exception does not apply.
    @Test(.enabled(if: hasPrivateGroup, "this user's primary group is not a private one"))
    func aPrivateGroupFileWithAnAccessControlListIsRefused() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.copy(Fixtures.library("Beta"), as: "libBeta.so")
        #expect(chown(file, geteuid(), getegid()) == 0)
        try Self.setAccessControlList(file, otherUser: 6)
        let (bad, host) = try load(file)
        defer { host.shutdown() }
        #expect(bad.code == "unsafe-permissions", "\(bad.reason ?? "")")
    }

    /// A list that lets another user only read leaves the exception standing.
    @Test(.enabled(if: hasPrivateGroup, "this user's primary group is not a private one"))
    func aPrivateGroupFileWhoseAccessControlListGrantsOnlyReadingIsAllowed() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.copy(Fixtures.library("Beta"), as: "libBeta.so")
        #expect(chown(file, geteuid(), getegid()) == 0)
        try Self.setAccessControlList(file, otherUser: 5)
        let (record, host) = try load(file)
        defer { host.shutdown() }
        #expect(record.status == .active, "\(record.reason ?? "")")
    }

    /// Sets `file`'s access list: owner rwx, user 65534 `otherUser`, group
    /// r-x, mask rwx, other r-x (posix_acl_xattr: version 2, then tag,
    /// permissions and id per entry, sorted by tag), with `setxattr`.
    static func setAccessControlList(_ file: String, otherUser: Int) throws {
        var list: [UInt8] = [2, 0, 0, 0]
        for (tag, permissions, id) in [(0x01, 7, UInt32.max), (0x02, otherUser, 65534), (0x04, 5, UInt32.max), (0x10, 7, UInt32.max), (0x20, 5, UInt32.max)] {
            list += [UInt8(tag), 0, UInt8(permissions), 0]
            list += withUnsafeBytes(of: UInt32(id).littleEndian, Array.init)
        }
        typealias SetAttribute = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer, Int, Int32) -> Int32
        let setxattr = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setxattr"))
        let status = list.withUnsafeBytes { unsafeBitCast(setxattr, to: SetAttribute.self)(file, "system.posix_acl_access", $0.baseAddress!, $0.count, 0) }
        try #require(status == 0, "this file system takes no access control lists (errno \(errno))")
    }

    /// `su` without `-` keeps another user's XDG_RUNTIME_DIR: the host puts
    /// its private copies in the temp directory instead, and still loads.
    @Test(.enabled(if: isRoot, "giving a folder to another user needs root"))
    func anotherUsersRuntimeDirectoryIsNotUsedForCopies() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        let runtime = try TemporaryDirectory()
        chmod(runtime.path, 0o700)
        #expect(chown(runtime.path, 65534, 65534) == 0)
        let result = try runProcess(try Fixtures.executable("plugboard"), ["run", "alpha", "--plugins", dir.path, "--cache", cache.path],
                                    environment: ["XDG_RUNTIME_DIR": runtime.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("alpha"), "\(result.stdout)")
    }

    @Test func aWorldWritableParentIsRefusedAndNamed() throws {
        let (parent, file) = try pluginInSafeFolder(under: 0o777)
        let (bad, host) = try load(file)
        defer { host.shutdown() }
        #expect(bad.code == "unsafe-permissions")
        #expect(bad.reason?.contains("its folder \(parent.path) can be written by other users") == true, "\(bad.reason ?? "")")
        #expect(bad.reason?.contains("mode 0777") == true)
    }

    /// `W/plugins -> S`: S and its parents are safe, but whoever can write W
    /// can point the link elsewhere, so the path as given is checked too.
    @Test func aPluginsDirectoryReachedThroughALinkInAWorldWritableFolderIsRefused() throws {
        let real = try TemporaryDirectory()
        try real.copy(Fixtures.library("Beta"), as: "libBeta.so")
        let open = try TemporaryDirectory()
        chmod(open.path, 0o777)
        symlink(real.path, open.file("plugins"))
        let (bad, host) = try load(open.file("plugins") + "/libBeta.so")
        defer { host.shutdown() }
        #expect(bad.code == "unsafe-permissions")
        #expect(bad.reason?.contains("its folder \(open.path) can be written by other users") == true, "\(bad.reason ?? "")")
    }

    @Test func aStickyWorldWritableParentIsAllowedAsTmpIs() throws {
        let (parent, file) = try pluginInSafeFolder(under: 0o1777)
        let (record, host) = try load(file)
        defer { host.shutdown(); withExtendedLifetime(parent) {} }
        #expect(record.status == .active, "\(record.reason ?? "")")
    }

    @Test func aStickyWorldWritablePluginsDirectoryIsRefused() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.copy(Fixtures.library("Beta"), as: "libBeta.so")
        chmod(dir.path, 0o1777)
        let (bad, host) = try load(file)
        defer { host.shutdown() }
        #expect(bad.code == "unsafe-permissions")
        #expect(bad.reason?.contains("its folder \(dir.path)") == true, "\(bad.reason ?? "")")
    }

    @Test func aSymlinkOutOfTheTrustedTreeIsRefusedUnlessItsFolderIsTrusted() throws {
        let elsewhere = try TemporaryDirectory()
        let real = try elsewhere.copy(Fixtures.library("Beta"), as: "libBeta.so")
        let dir = try TemporaryDirectory()
        symlink(real, dir.file("beta.so"))
        let (bad, host) = try load(dir.file("beta.so"))
        defer { host.shutdown() }
        #expect(bad.code == "untrusted-symlink")
        #expect(bad.reason?.contains("a symlink to \(URL(fileURLWithPath: real).resolvingSymlinksInPath().path)") == true, "\(bad.reason ?? "")")
        #expect(bad.reason?.contains("trustedDirectories") == true)

        let trusted = DirectoryTrust(trustedDirectories: [elsewhere.path])
        let (record, other) = try load(dir.file("beta.so"), trust: trusted)
        defer { other.shutdown() }
        #expect(record.status == .active, "\(record.reason ?? "")")
    }

    @Test(.enabled(if: isRoot, "giving a file to another user needs root; run the tests as root to check this rule"))
    func aFileOwnedByAnotherUserIsRefused() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.copy(Fixtures.library("Beta"), as: "libBeta.so")
        #expect(chown(file, 65534, 65534) == 0)
        let (bad, host) = try load(file)
        defer { host.shutdown() }
        #expect(bad.code == "unsafe-owner")
        #expect(bad.reason?.contains("owned by user 65534") == true && bad.reason?.contains("chown root '\(file)'") == true, "\(bad.reason ?? "")")
    }

    @Test(.enabled(if: isRoot, "giving a folder to another user needs root"))
    func aFolderOwnedByAnotherUserIsRefused() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.copy(Fixtures.library("Beta"), as: "libBeta.so")
        #expect(chown(dir.path, 65534, 65534) == 0)
        let (bad, host) = try load(file)
        defer { host.shutdown() }
        #expect(bad.code == "unsafe-owner")
        #expect(bad.reason?.contains("its folder \(dir.path) is owned by user 65534") == true, "\(bad.reason ?? "")")
    }

    @Test func theOptOutLoadsAnywayAndSaysSoLoudly() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.copy(Fixtures.library("Beta"), as: "libBeta.so")
        chmod(file, 0o777)
        let (record, host) = try load(file, trust: .unenforced)
        defer { host.shutdown() }
        #expect(record.status == .active)
        #expect(host.diagnostics.contains { $0.code == "directory-checks-off" && $0.severity == .warning })
    }

    @Test func aLockFileOthersCanWriteIsRefused() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        let lock = LockFile.defaultPath(for: dir.path)
        try writeLockFile(lock, listing: [(dir.file("libAlpha.so"), "fixture.alpha")])
        chmod(lock, 0o666)
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path, lockFile: lock))
        defer { host.shutdown() }
        let records = try host.discover()
        #expect(records.map(\.code) == ["lock-file-invalid"])
        #expect(records.first?.reason?.contains("can be written by other users") == true, "\(records.first?.reason ?? "")")
    }

    @Test func theCommandLineRefusesAndItsOptOutWarns() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        chmod(dir.path, 0o777)
        let tool = try Fixtures.executable("plugboard")
        // Explicitly not opted out, whatever the environment running the tests says.
        let refused = try runProcess(tool, ["list", "--plugins", dir.path, "--cache", cache.path, "--json"],
                                     environment: [DirectoryTrust.environmentOptOut: "0"])
        #expect(refused.stdout.contains("\"unsafe-permissions\""), "\(refused.stdout)")
        let allowed = try runProcess(tool, ["list", "--plugins", dir.path, "--cache", cache.path],
                                     environment: [DirectoryTrust.environmentOptOut: "1"])
        #expect(allowed.stdout.contains("fixture.alpha") && !allowed.stdout.contains("unsafe-permissions"), "\(allowed.stdout)")
        #expect(allowed.stderr.contains("[directory-checks-off]"), "\(allowed.stderr)")
    }

    /// A hot reload's build is held to the same rules as discovery, and to
    /// the lock file; the running generation stays.
    @Test func aReloadOfABuildOthersCanChangeOrThatIsNotLockedIsRefused() throws {
        let dir = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(imagesDirectory: dir.file("generations"), cacheDirectory: cache.path))
        host.declare(Commands.self)
        defer { host.shutdown() }
        #expect(host.load(reloadable: try Fixtures.library("ReloadV1").path).status == .active)
        let build = try dir.copy(Fixtures.library("ReloadV2"), as: "libReloadV2.so")
        chmod(build, 0o777)
        guard case let .rejected(error) = host.reload("fixture.reloadable", from: build).result else {
            Issue.record("a world-writable build was reloaded")
            return
        }
        #expect(error.code == "unsafe-permissions")
        #expect(host.records.first { $0.id == "fixture.reloadable" }?.generation == 1, "the running generation stays")

        // Under a lock file, a new build under the locked name is a hash mismatch.
        let locked = try TemporaryDirectory()
        let first = try locked.copy(Fixtures.library("ReloadV1"), as: "libReloadV1.so")
        let lock = locked.file("plugboard.lock")
        try writeLockFile(lock, listing: [(first, "fixture.reloadable")])
        let strict = PluginHost(configuration: .with(imagesDirectory: locked.file("generations"), cacheDirectory: cache.path, lockFile: lock))
        strict.declare(Commands.self)
        defer { strict.shutdown() }
        #expect(strict.load(reloadable: first).status == .active)
        let next = try TemporaryDirectory()
        let rebuilt = try next.copy(Fixtures.library("ReloadV2"), as: "libReloadV1.so")
        guard case let .rejected(mismatch) = strict.reload("fixture.reloadable", from: rebuilt).result else {
            Issue.record("a build that is not locked was reloaded")
            return
        }
        #expect(mismatch.code == "lock-hash-mismatch")
    }

    /// An images directory others can write is not used (a copy could be
    /// swapped between its write and its load): one warning names it and the
    /// fix, and the plugins load from the default private folder.
    @Test func anImagesDirectoryOthersCanWriteIsNotUsed() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        let images = try TemporaryDirectory()
        chmod(images.path, 0o777)
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, imagesDirectory: images.path, cacheDirectory: cache.path))
        host.declare(Commands.self)
        defer { host.shutdown() }
        #expect(try host.loadAll().map(\.status) == [.active])
        let warnings = host.diagnostics.filter { $0.code == "images-directory-untrusted" }
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.contains(images.path) == true && warnings.first?.message.contains("chmod go-w") == true,
                "\(warnings.first?.message ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: images.path).isEmpty, "nothing written there")
    }

    @Test(.enabled(if: isRoot, "giving a symlink to another user needs root"))
    func aSymlinkOfAnotherUserInAStickyFolderIsRefused() throws {
        let real = try TemporaryDirectory()
        try real.copy(Fixtures.library("Beta"), as: "libBeta.so")
        let sticky = try TemporaryDirectory()
        chmod(sticky.path, 0o1777)
        symlink(real.path, sticky.file("plugins"))
        #expect(lchown(sticky.file("plugins"), 65534, 65534) == 0)
        let (bad, host) = try load(sticky.file("plugins") + "/libBeta.so")
        defer { host.shutdown() }
        #expect(bad.code == "unsafe-owner")
        #expect(bad.reason?.contains("its folder \(sticky.file("plugins")) is owned by user 65534") == true, "\(bad.reason ?? "")")
    }

    @Test func aPathThatCannotBeExaminedIsRefused() {
        var check = OwnershipCheck()
        let missing = "/nonexistent-\(getpid())/plugins/a.so"
        let problem = check.problem(path: missing, resolved: missing, folder: OwnershipCheck.parent(of: missing), trusted: [])
        #expect(problem?.code == "unreadable")
        #expect(problem?.reason.contains("cannot check who can change it") == true, "\(problem?.reason ?? "")")
    }
}
