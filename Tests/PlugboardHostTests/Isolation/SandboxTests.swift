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
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Sandboxed plugins against a hostile one (the fixture SandboxAttacks),
/// through `plugboard run` as the user runs it: as root and as an ordinary
/// user. Each attack is one process of the tool; the decoy it aims signals
/// and tracing at is a `sleep` of the same user, never the test runner.
@Suite struct SandboxTests {
    /// One attack: its arguments and whether a plain isolated child
    /// (the host's user and rights) gets away with it as `user`.
    struct Attack: Sendable, CustomTestStringConvertible {
        let name: String
        let arguments: @Sendable (Setup) -> [String]
        let worksIsolated: @Sendable (User) -> Bool
        var testDescription: String { name }
    }

    enum User: String, Sendable, CaseIterable { case root, nobody }

    /// The folders of one run, readable (and the data writable) by nobody.
    struct Setup {
        let dir: TemporaryDirectory
        let decoy: pid_t
        let tcpPort: UInt16
        var plugins: String { dir.file("plugins") }
        var secret: String { dir.file("home/.ssh/id_ed25519") }
    }

    static let attacks: [Attack] = [
        Attack(name: "read a planted secret", arguments: { ["read", $0.secret] }, worksIsolated: { _ in true }),
        Attack(name: "write outside its storage", arguments: { ["write", $0.dir.file("home/planted")] }, worksIsolated: { _ in true }),
        Attack(name: "TCP to 127.0.0.1", arguments: { ["tcp", String($0.tcpPort)] }, worksIsolated: { _ in true }),
        Attack(name: "UDP to 127.0.0.1", arguments: { _ in ["udp", "9"] }, worksIsolated: { _ in true }),
        Attack(name: "abstract unix socket", arguments: { _ in ["abstract", "plugboard-test-none"] }, worksIsolated: { _ in false }),
        Attack(name: "signal a process", arguments: { ["kill", String($0.decoy)] }, worksIsolated: { _ in true }),
        Attack(name: "ptrace a process", arguments: { ["ptrace", String($0.decoy)] }, worksIsolated: { _ in true }),
        Attack(name: "read a process's memory", arguments: { ["memory", String($0.decoy)] }, worksIsolated: { _ in true }),
        Attack(name: "read the host's environment", arguments: { _ in ["environ"] }, worksIsolated: { _ in true }),
        Attack(name: "run a program", arguments: { _ in ["exec"] }, worksIsolated: { _ in true }),
        Attack(name: "fork (bounded)", arguments: { _ in ["fork", "20"] }, worksIsolated: { _ in true }),
        Attack(name: "a setsid grandchild out of its group", arguments: { _ in ["escape"] }, worksIsolated: { _ in true }),
        Attack(name: "chmod one of the user's files", arguments: { ["chmod", $0.secret] }, worksIsolated: { _ in true }),
        Attack(name: "set another process's CPU limit", arguments: { ["prlimit", String($0.decoy)] }, worksIsolated: { _ in true }),
        Attack(name: "aim a descriptor's signals at a process", arguments: { ["setown", String($0.decoy)] }, worksIsolated: { _ in true }),
        Attack(name: "raise its limits", arguments: { _ in ["limits"] }, worksIsolated: { _ in true }),
        Attack(name: "a new namespace", arguments: { _ in ["unshare"] }, worksIsolated: { _ in false }),
        Attack(name: "mount", arguments: { ["mount", $0.dir.file("home/mnt")] }, worksIsolated: { $0 == .root }),
        Attack(name: "mknod", arguments: { ["mknod", $0.dir.file("home/fifo")] }, worksIsolated: { _ in true }),
        Attack(name: "SysV shared memory", arguments: { _ in ["shm"] }, worksIsolated: { _ in true }),
        Attack(name: "a POSIX message queue", arguments: { _ in ["mqueue"] }, worksIsolated: { _ in true }),
        Attack(name: "fill the disk", arguments: { ["fill", $0.dir.file("data/fixture.sandbox-attacks/filler")] }, worksIsolated: { _ in true }),
    ]

    /// The tool as an ordinary user runs it: this checkout's, where others
    /// can reach its build folder, else a copy with the programs and
    /// libraries it needs in a world-readable temporary folder (a clone
    /// under /root, mode 700, as a new Debian machine has it).
    static let toolForNobody: String? = {
        guard let plugboard = try? Fixtures.executable("plugboard").path else { return nil }
        func runs(_ tool: String) -> Bool {
            (try? runProcess(URL(fileURLWithPath: "/usr/bin/setpriv"), nobody + [tool, "--help"]).status) == 0
        }
        if runs(plugboard) { return plugboard }
        let built = URL(fileURLWithPath: plugboard).deletingLastPathComponent().path
        let folder = FileManager.default.temporaryDirectory.path + "/plugboard-nobody-tool-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        chmod(folder, 0o755)
        for name in ["plugboard", "plugboard-child", "libPlugboard.so", "libDemoInterfaces.so"] {
            try? FileManager.default.copyItem(atPath: built + "/" + name, toPath: folder + "/" + name)
            chmod(folder + "/" + name, 0o755)
        }
        atexit { try? FileManager.default.removeItem(atPath: FileManager.default.temporaryDirectory.path + "/plugboard-nobody-tool-\(getpid())") }
        return runs(folder + "/plugboard") ? folder + "/plugboard" : nil
    }()
    static let nobodyCanRunPlugboard = toolForNobody != nil

    static let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]

    func setUp(as user: User) throws -> (Setup, Int32) {
        let dir = try TemporaryDirectory()
        let fm = FileManager.default
        for folder in ["plugins", "home/.ssh", "home/mnt", "data", "cache"] {
            try fm.createDirectory(atPath: dir.file(folder), withIntermediateDirectories: true)
        }
        _ = try dir.copy(Fixtures.library("SandboxAttacks"), as: "plugins/libSandboxAttacks.so")
        try Data("PRIVATE KEY".utf8).write(to: URL(fileURLWithPath: dir.file("home/.ssh/id_ed25519")))
        // The secret is the user's own: only the sandbox stands between it and the plugin.
        let owner: uid_t = user == .root ? 0 : 65534
        for path in [dir.path, dir.file("home"), dir.file("home/.ssh"), dir.file("home/.ssh/id_ed25519"), dir.file("home/mnt"), dir.file("data"), dir.file("cache")] {
            chown(path, owner, owner)
        }
        chmod(dir.path, 0o755)
        // A listener the TCP attack reaches unless something stops it.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        listen(listener, 64)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        let decoy = try spawnDecoy(as: user)
        return (Setup(dir: dir, decoy: decoy, tcpPort: UInt16(bigEndian: address.sin_port)), listener)
    }

    /// A `sleep` of `user`, reaped by the caller.
    func spawnDecoy(as user: User) throws -> pid_t {
        var pid: pid_t = 0
        let words = (user == .root ? ["/bin/sleep"] : ["/usr/bin/setpriv"] + Self.nobody + ["/bin/sleep"]) + ["120"]
        let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        try #require(posix_spawn(&pid, words[0], nil, nil, arguments, environ) == 0)
        return pid
    }

    /// `level`: `--sandbox-all`, `--isolate-all`, or nil (in the tool's own process).
    func run(_ attack: [String], level: String?, as user: User, in setup: Setup) throws -> String {
        let plugboard = try Fixtures.executable("plugboard").path
        let tool = ["run", "attack", "--plugins", setup.plugins] + (level.map { [$0] } ?? []) + ["--data", setup.dir.file("data"), "--cache", setup.dir.file("cache"),
                    "--allow-unsafe-directories", "--"] + attack
        let result = user == .root
            ? try runProcess(URL(fileURLWithPath: plugboard), tool)
            : try runProcess(URL(fileURLWithPath: "/usr/bin/setpriv"), Self.nobody + [try #require(Self.toolForNobody)] + tool)
        // The host lived through it and answered the call.
        #expect(result.status == 0, "\(attack) \(level ?? "in process") as \(user): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Every attack of the corpus is refused sandboxed, as root and as an
    /// ordinary user; the same plugin isolated (a plain child) and in
    /// process (in the tool's own process, never the test runner) gets away
    /// with those it is not stopped from by anything else.
    @Test(.enabled(if: SandboxTests.nobodyCanRunPlugboard || Tools.isCI, "an ordinary user cannot run the tool, even copied to a temporary folder"),
          arguments: User.allCases)
    func theHostileCorpusIsRefusedSandboxedAndNotIsolated(user: User) throws {
        let (setup, listener) = try setUp(as: user)
        defer {
            close(listener)
            kill(setup.decoy, SIGKILL)
            var status: Int32 = 0
            waitpid(setup.decoy, &status, 0)
            _ = umount(setup.dir.file("home/mnt"))
        }
        var table: [String] = []
        /// What an attack that worked left behind, gone before the next run.
        func clean() {
            while umount(setup.dir.file("home/mnt")) == 0 {}
            unlink(setup.dir.file("home/planted"))
            unlink(setup.dir.file("home/fifo"))
        }
        for attack in Self.attacks {
            let sandboxed = try run(attack.arguments(setup), level: "--sandbox-all", as: user, in: setup)
            #expect(sandboxed.hasPrefix("refused"), "\(attack.name) as \(user), sandboxed: \(sandboxed)")
            clean()
            let isolated = try run(attack.arguments(setup), level: "--isolate-all", as: user, in: setup)
            clean()
            let inProcess = try run(attack.arguments(setup), level: nil, as: user, in: setup)
            clean()
            if attack.worksIsolated(user) {
                #expect(isolated.hasPrefix("done"), "\(attack.name) as \(user), isolated: \(isolated)")
                // In process, "the host's environment" is its parent's: the test runner's, root's.
                if attack.name != "read the host's environment" || user == .root {
                    #expect(inProcess.hasPrefix("done"), "\(attack.name) as \(user), in process: \(inProcess)")
                }
            }
            table.append("\(attack.name): in process \(inProcess.prefix(30)) | isolated \(isolated.prefix(30)) | sandboxed \(sandboxed.prefix(40))")
        }
        print("sandbox corpus as \(user):\n" + table.joined(separator: "\n"))
    }

    /// A host on the hostile fixture with `isolation`, its diagnostics heard.
    func host(
        _ dir: TemporaryDirectory, isolation: PluginIsolation, fixture: String = "SandboxAttacks",
        diagnostics: (@Sendable (HostDiagnostic) -> Void)? = nil
    ) throws -> PluginHost {
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try dir.copy(Fixtures.library(fixture), as: "plugins/lib\(fixture).so")
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: dir.file("plugins"), dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache"))
        configuration.isolation.others = isolation
        configuration.observability.diagnosticSink = diagnostics
        let host = PluginHost(configuration: configuration)
        host.declare(Commands.self)
        try host.start()
        return host
    }

    func attack(_ host: PluginHost, _ arguments: String...) throws -> String {
        let command = try #require(host.registry.providers(of: Commands.self).first { $0.name == "attack" })
        return try command.run(arguments: arguments)
    }

    /// A refused system call is named to the host (once per call), and the
    /// plugin gets an error for it, never a hang or a silent success.
    @Test func aRefusedCallIsNamedToTheHost() throws {
        let dir = try TemporaryDirectory()
        let heard = try EventPipe()
        let host = try host(dir, isolation: .sandboxed, diagnostics: { diagnostic in
            if diagnostic.code == "sandbox-denied" { heard.signal() }
        })
        defer { host.shutdown() }
        #expect(try attack(host, "ptrace", "1") == "refused Operation not permitted")
        heard.wait()
        let denial = try #require(host.diagnostics.first { $0.code == "sandbox-denied" })
        #expect(denial.plugin == "fixture.sandbox-attacks")
        #expect(denial.message.contains("ptrace"), "\(denial.message)")
        // The child lives on and answers.
        #expect(try attack(host, "unknown") == "unknown attack")
    }

    /// A layer turned off (as on a kernel without it): a required sandbox
    /// refuses the start before any plugin code runs, naming the layer; a
    /// best-effort one starts, reports the gap and taints the host.
    @Test(arguments: [PluginSandbox.Layer.landlock, .seccomp])
    func aMissingLayerRefusesARequiredSandboxAndTaintsABestEffortOne(layer: PluginSandbox.Layer) throws {
        let dir = try TemporaryDirectory()
        var required = PluginIsolation.sandboxed
        required.sandbox?.layersOff = [layer]
        let refused = try host(dir, isolation: required)
        #expect(refused.registry.providers(of: Commands.self).isEmpty)
        let record = try #require(refused.records.first { $0.id == "fixture.sandbox-attacks" })
        #expect(record.code == "sandbox-unavailable", "\(record)")
        #expect(record.reason?.contains("\(layer)") == true, "\(String(describing: record.reason))")
        refused.shutdown()

        var bestEffort = required
        bestEffort.sandbox?.enforcement = .bestEffort
        let other = try TemporaryDirectory()
        let started = try host(other, isolation: bestEffort)
        defer { started.shutdown() }
        #expect(try attack(started, "unknown") == "unknown attack")
        let status = try #require(started.records.first { $0.id == "fixture.sandbox-attacks" }?.isolation?.sandbox)
        #expect(status.level == "partial")
        #expect(status.missing.contains { $0.hasPrefix("\(layer): turned off by the host") }, "\(status.missing)")
        #expect(started.taint.contains { $0.code == "sandbox-partial" })
    }

    /// The scanner is sandboxed by default: a constructor that runs while
    /// the file is scanned cannot write beside the copy it was loaded from
    /// (ScanProbe writes what it saw there), and the scan still succeeds.
    @Test func aScannersConstructorCannotWriteOutsideItsScratch() throws {
        let dir = try TemporaryDirectory(), images = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("ScanProbe"), as: "probe.so")
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, imagesDirectory: images.path, cacheDirectory: cache.path))
        defer { host.shutdown() }
        #expect(try host.discover().first?.status == .available)
        let files = FileManager.default.enumerator(atPath: images.path)?.compactMap { $0 as? String } ?? []
        #expect(!files.contains { $0.hasSuffix("scan-probe") }, "the probe wrote beside its copy: \(files)")
        #expect(!host.taint.contains { $0.code == "scanner-sandbox-partial" }, "\(host.taint)")
    }

    /// `plugboard doctor` reports what this machine offers: here (the kind
    /// of machine the suite runs on) every layer, so it exits 0; wrong
    /// usage exits 64.
    @Test func doctorReportsTheLayersThisMachineOffers() throws {
        let plugboard = try Fixtures.executable("plugboard")
        let result = try runProcess(plugboard, ["doctor", "--json"])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(report["level"] as? String == "sandboxed")
        let layers = try #require(report["layers"] as? [String])
        #expect(Set(["limits", "no-new-privileges", "landlock", "seccomp"]).isSubset(of: Set(layers)), "\(layers)")
        #expect((report["missing"] as? [String])?.isEmpty == true)
        let held = ChildCgroups.Bound.all.filter(ChildCgroups.process.reachable.contains).map(\.description)
        #expect(report["bounds"] as? [String] == held && (report["boundsInstead"] as? [String])?.isEmpty == (getuid() == 0 && held.count == 3), "\(report)")
        // Beside the tool's real path (.build/debug is a link).
        #expect(report["childProgram"] as? String == plugboard.resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("plugboard-child").path,
                "plugboard-child beside the tool: \(report)")
        #expect(try runProcess(plugboard, ["doctor", "extra"]).status == 64)
    }

    /// A plugin's declared needs (SDK 2.3) are read without running it; run
    /// sandboxed, it is refused before any of its code runs when one is not
    /// granted, and given only what is both declared and granted.
    @Test func declaredNeedsAreShownAndGrantedOrRefusedBeforeItsCodeRuns() throws {
        let inspected = try runProcess(Fixtures.executable("plugboard"), ["inspect", Fixtures.library("SandboxNeeds").path, "--json"])
        let record = try #require(try JSONSerialization.jsonObject(with: Data(inspected.stdout.utf8)) as? [String: Any])
        #expect(record["needs"] as? [String] == ["tcp-connect:9", "read:/etc/passwd"], "\(inspected.stdout)")

        let dir = try TemporaryDirectory()
        let refused = try host(dir, isolation: .sandboxed, fixture: "SandboxNeeds")
        #expect(refused.registry.providers(of: Commands.self).isEmpty)
        let refusal = try #require(refused.records.first { $0.id == "fixture.sandbox-needs" })
        #expect(refusal.code == "sandbox-need-not-granted", "\(refusal)")
        #expect(refusal.reason?.contains("grants.tcpConnect: [9]") == true && refusal.reason?.contains("/etc/passwd") == true, "\(String(describing: refusal.reason))")
        refused.shutdown()

        // The host grants more than is declared: the child gets the intersection.
        var granted = PluginIsolation.sandboxed
        granted.sandbox?.grants = .init(tcpConnect: [9, 80], readPaths: ["/etc"])
        let other = try TemporaryDirectory()
        let host = try host(other, isolation: granted, fixture: "SandboxNeeds")
        defer { host.shutdown() }
        #expect(try attack(host, "read", "/etc/passwd").hasPrefix("done"))
        #expect(try attack(host, "read", "/etc/group") == "refused Permission denied", "granted to the host's list, not declared")
        let declaredPort = try attack(host, "tcp", "9")
        #expect(declaredPort.hasPrefix("done") || declaredPort == "refused Connection refused", "\(declaredPort)")
        #expect(try attack(host, "tcp", "80") == "refused Permission denied", "granted to the host's list, not declared")
        #expect(try attack(host, "udp", "9").hasPrefix("refused"))
    }

    /// Sandboxed, a plugin's folder is read-only to it: the host makes its
    /// storage writes, with the host's quota, so a value over the quota is
    /// refused with the quota's code (and the host hears it), as in process.
    @Test func aSandboxedPluginsStorageWritesAreMadeByTheHostWithItsQuota() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try dir.copy(Fixtures.library("IsolationFaults"), as: "plugins/plugin.so")
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: dir.file("plugins"), dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache"))
        configuration.isolation.others = .sandboxed
        configuration.storageQuota = StorageQuota(maximumBytes: 1 << 20, maximumKeys: 10, maximumValueBytes: 8)
        let host = PluginHost(configuration: configuration)
        host.declare(Commands.self)
        try host.start()
        defer { host.shutdown() }
        let fault = try #require(host.registry.providers(of: Commands.self).first { $0.name == "fault" })
        #expect(try fault.run(arguments: ["store", "key", "small"]) == "stored")
        #expect(try fault.run(arguments: ["load", "key"]) == "small")
        func values() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: dir.file("data/fixture.isolation-faults"))) ?? []).filter { $0.hasSuffix(".value") }.count
        }
        #expect(values() == 1)
        #expect(throws: (any Error).self) { try fault.run(arguments: ["store", "big", "more than eight bytes"]) }
        #expect(values() == 1, "the value over the quota was not written")
        #expect(host.diagnostics.contains { $0.code == "storage-quota-exceeded" && $0.plugin == "fixture.isolation-faults" }, "\(host.diagnostics.map(\.code))")
        #expect(try fault.run(arguments: ["load", "key"]) == "small")
    }

    /// Namespaces are a layer more where the kernel allows them, not a
    /// guarantee: turned off, a required sandbox still starts, and the
    /// status says they are missing.
    @Test func withoutNamespacesARequiredSandboxStartsAndSaysSo() throws {
        let dir = try TemporaryDirectory()
        var isolation = PluginIsolation.sandboxed
        isolation.sandbox?.layersOff = [.namespaces]
        let host = try host(dir, isolation: isolation)
        defer { host.shutdown() }
        #expect(try attack(host, "udp", "9").hasPrefix("refused"))
        let status = try #require(host.records.first { $0.id == "fixture.sandbox-attacks" }?.isolation?.sandbox)
        #expect(status.level == "sandboxed")
        #expect(!status.layers.contains("namespaces"))
        #expect(status.optionalMissing.contains { $0.hasPrefix("namespaces: turned off by the host") }, "\(status.optionalMissing)")
    }

    /// An operator grants a plugin's needs in the settings file
    /// (`"grants"`), so `plugboard` runs it sandboxed; a grant of the wrong
    /// type is reported with its key path and left out.
    @Test func grantsInTheSettingsFileLetTheToolRunAPluginThatNeedsThem() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try dir.copy(Fixtures.library("SandboxNeeds"), as: "plugins/libSandboxNeeds.so")
        let plugboard = try Fixtures.executable("plugboard")
        func run(config: String?) throws -> ProcessResult {
            let settings = try config.map { try dir.write(Data($0.utf8), as: "host.json") }
            return try runProcess(plugboard, ["run", "attack", "--plugins", dir.file("plugins"), "--sandbox-all", "--data", dir.file("data"),
                                              "--cache", dir.file("cache")] + (settings.map { ["--config", $0] } ?? []) + ["--", "read", "/etc/passwd"])
        }
        let refused = try run(config: nil)
        #expect(refused.status == 1 && refused.stderr.contains("sandbox-need-not-granted"), "\(refused.stdout) \(refused.stderr)")
        let granted = try run(config: #"{"plugins": {"fixture.sandbox-needs": {"grants": {"tcpConnect": [9], "readPaths": ["/etc"]}}}}"#)
        #expect(granted.status == 0 && granted.stdout.hasPrefix("done"), "\(granted.stdout) \(granted.stderr)")

        let settings = HostSettings.parse(Data(#"{"plugins": {"a.b": {"grants": {"tcpConnect": ["443", 70000, 22], "network": "yes"}}}}"#.utf8), file: "host.json")
        #expect(settings.plugins["a.b"]?.grants?.tcpConnect == [22])
        #expect(settings.diagnostics.contains { $0.code == "config-invalid-type" && $0.keyPath == "plugins.a.b.grants.tcpConnect" })
        #expect(settings.diagnostics.contains { $0.keyPath == "plugins.a.b.grants.network" })
    }

    /// A declared read path cannot climb out of what the host granted: no
    /// `.` or `..` component, and a link under a granted folder that points
    /// out of it is judged by where it points. Bad need text is refused.
    @Test func aDeclaredReadPathCannotClimbOutOfAGrant() throws {
        #expect(DeclaredNeed("read:/etc/ssl/../../root") == nil)
        #expect(DeclaredNeed("read:/etc/./ssl") == nil)
        #expect(DeclaredNeed("read:relative/path") == nil)
        #expect(DeclaredNeed("tcp-connect:0") == nil && DeclaredNeed("tcp-bind:70000") == nil && DeclaredNeed("udp") == nil)
        #expect(DeclaredNeed("tcp-connect:443") == .tcpConnect(443) && DeclaredNeed("network") == .network)
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("granted"), withIntermediateDirectories: true)
        _ = try dir.write(Data("x".utf8), as: "granted/inside")
        symlink("/etc", dir.file("granted/out"))
        let grants = PluginSandbox.Grants(readPaths: [dir.file("granted")])
        #expect(DeclaredNeed.read(dir.file("granted/inside")).isGranted(by: grants))
        #expect(!DeclaredNeed.read(dir.file("granted/out/passwd")).isGranted(by: grants), "a link out of the grant")
    }

    /// What seccomp holds alone (Landlock off, as on a kernel without it, or
    /// before its signal scopes): processes, signals, limits, scheduling
    /// and the network stay refused.
    @Test func seccompAloneRefusesProcessesSignalsLimitsAndTheNetwork() throws {
        let decoy = try spawnDecoy(as: .root)
        defer {
            kill(decoy, SIGKILL)
            var status: Int32 = 0
            waitpid(decoy, &status, 0)
        }
        var isolation = PluginIsolation.sandboxed
        isolation.sandbox?.layersOff = [.landlock]
        isolation.sandbox?.enforcement = .bestEffort
        let dir = try TemporaryDirectory()
        let host = try host(dir, isolation: isolation)
        defer { host.shutdown() }
        for attack in [["kill", String(decoy)], ["ptrace", String(decoy)], ["prlimit", String(decoy)], ["setown", String(decoy)],
                       ["udp", "9"], ["tcp", "9"], ["exec"], ["fork", "5"], ["limits"], ["unshare"], ["chmod", dir.file("plugins")]] {
            let answer = try self.attack(host, attack[0], attack.count > 1 ? attack[1] : "")
            #expect(answer.hasPrefix("refused"), "\(attack): \(answer)")
        }
        #expect(kill(decoy, 0) == 0, "the decoy lives")
    }

    /// Bad input, each with its code: a need no SDK writes is refused when
    /// scanned (`invalid-need`); an own key file that cannot be read is
    /// reported (`own-key-unreadable`); a scanner sandbox missing a layer
    /// taints the host (`scanner-sandbox-partial`) or, required, scans
    /// nothing (`scanner-unavailable`).
    @Test func badSandboxInputGetsItsOwnCode() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try dir.copy(Fixtures.library("SandboxBadNeed"), as: "plugins/libBad.so")
        func host(_ change: (inout PluginHost.Configuration) -> Void) -> PluginHost {
            var configuration = PluginHost.Configuration.with(
                pluginsDirectory: dir.file("plugins"), dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache-\(UUID().uuidString)"))
            change(&configuration)
            return PluginHost(configuration: configuration)
        }
        let plain = host { _ in }
        let record = try #require(try plain.discover().first)
        #expect(record.code == "invalid-need" && record.reason?.contains("relative/path") == true, "\(record)")
        plain.shutdown()

        let keyless = host { $0.trust.ownKeyFiles = [dir.file("missing.pub")] }
        #expect(keyless.diagnostics.contains { $0.code == "own-key-unreadable" && $0.message.contains("missing.pub") })
        keyless.shutdown()

        let partial = host { $0.scanner.sandbox?.layersOff = [.landlock] }
        _ = try partial.discover()
        #expect(partial.taint.contains { $0.code == "scanner-sandbox-partial" }, "\(partial.taint)")
        partial.shutdown()

        let required = host {
            $0.scanner.sandbox?.layersOff = [.seccomp]
            $0.scanner.sandbox?.enforcement = .required
        }
        let unscanned = try #require(try required.discover().first)
        #expect(unscanned.code == "scanner-unavailable", "\(unscanned)")
        #expect(unscanned.reason?.contains("seccomp") == true, "\(String(describing: unscanned.reason))")
        required.shutdown()
    }
}
