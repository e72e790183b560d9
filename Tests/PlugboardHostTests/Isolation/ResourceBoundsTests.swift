import Foundation
import Plugboard
import Synchronization
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardLoading
import Testing

/// The kernel's bounds of an isolated plugin's child (docs/sandbox.md,
/// "Resources"): a cgroup leaf per child, joined before the start frame.
/// This machine and CI mount cgroup v1 and run the tests as root, where
/// every bound holds; elsewhere these tests say what is missing.
@Suite struct ResourceBoundsTests {
    static let cgroups = ChildCgroups.process
    static let bounded = cgroups.reachable.count == ChildCgroups.Bound.all.count

    func host(_ dir: TemporaryDirectory, limits: PluginIsolation.Limits, fixtures: [String] = ["SandboxAttacks"]) throws -> PluginHost {
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for fixture in fixtures { _ = try dir.copy(Fixtures.library(fixture), as: "plugins/lib\(fixture).so") }
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: dir.file("plugins"), dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache"))
        configuration.isolation.others = PluginIsolation(isolated: true, limits: limits)
        let host = PluginHost(configuration: configuration)
        host.declare(Commands.self)
        try host.start()
        return host
    }

    func attack(_ host: PluginHost, plugin: String = "fixture.sandbox-attacks", _ arguments: String...) throws -> String {
        let providers = host.registry.registrations(for: Commands.interface.id).filter { $0.pluginID == plugin }
        let provider = try #require(providers.first?.provider as? any Command)
        return try provider.run(arguments: arguments)
    }

    func resources(_ host: PluginHost, plugin: String = "fixture.sandbox-attacks") -> ResourceUsage? {
        host.snapshot().first { $0.id == plugin }?.isolation?.resources
    }

    /// The leaves in this process's folders (other tests' children's too).
    func leaves() -> [String] {
        Self.cgroups.folders.values.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("child-") }.map { folder + "/" + $0 }
        }
    }

    /// The leaves process `pid` is in, one per controller.
    func leaves(of pid: Int32) -> [String] {
        leaves().filter { leaf in
            ((try? String(contentsOfFile: leaf + "/cgroup.procs", encoding: .utf8)) ?? "").split(separator: "\n").contains("\(pid)")
        }
    }

    @Test(.enabled(if: bounded || Tools.isCI, "no cgroup for this process's children (not root, no delegation)"))
    func aThreadBombStopsAtItsTasksBoundAndTheHostStartsAnotherChild() throws {
        let dir = try TemporaryDirectory()
        let host = try host(dir, limits: .init(tasks: 64), fixtures: ["SandboxAttacks", "SandboxNeeds"])
        let answer = try attack(host, "threads", "1000")
        let made = Int(answer.split(separator: " ")[1]) ?? -1
        // The child's own threads count too: fewer than 64 are the bomb's.
        #expect(made > 0 && made < 64, "\(answer)")
        let usage = try #require(resources(host))
        #expect(usage.tasksLimit == 64 && usage.boundBy.hasPrefix("cgroup v"), "\(usage)")
        #expect((usage.tasks ?? 0) > 0 && (usage.tasks ?? 64) < 64, "\(usage)")
        // The host still starts a child for another plugin, which answers.
        #expect(try attack(host, plugin: "fixture.sandbox-needs", "unknown") == "unknown attack")
        // Each child in a leaf of its own per controller, gone with it.
        let children = host.snapshot().compactMap { $0.isolation?.pid }
        let held = children.map { leaves(of: $0) }
        #expect(children.count == 2 && held.allSatisfy { $0.count == Self.cgroups.folders.count } && Set(held[0]).isDisjoint(with: held[1]), "\(held)")
        host.shutdown()
        let left = held.joined().filter { FileManager.default.fileExists(atPath: $0) }
        #expect(left.isEmpty, "\(left)")
    }

    @Test(.enabled(if: bounded || Tools.isCI, "no cgroup for this process's children (not root, no delegation)"))
    func memoryPastItsBoundEndsTheChildAsOutOfMemoryAndTheHostLives() throws {
        let dir = try TemporaryDirectory()
        let host = try host(dir, limits: .init(memory: 64 << 20))
        defer { host.shutdown() }
        let hostMemory = ProcessUsage.of(getpid())?.memory ?? 0
        #expect(try attack(host, "allocate", "8") == "wrote 8 MiB")
        let error = #expect(throws: IsolatedCallError.self) { try attack(host, "allocate", "512") }
        #expect(error?.code == .pluginOutOfMemory, "\(String(describing: error))")
        #expect(error?.message.contains("memory bound") == true, "\(String(describing: error))")
        // Counted as a crash (the restart budget), and restarted on the next call.
        #expect(try attack(host, "allocate", "8") == "wrote 8 MiB")
        let usage = try #require(resources(host))
        #expect(usage.outOfMemoryKills == 1 && usage.memoryLimit == 64 << 20, "\(usage)")
        #expect(host.snapshot().first { $0.id == "fixture.sandbox-attacks" }?.crashes == 1)
        // Shared memory too (an isolated child may use SysV; its pages are
        // charged to the cgroup that first writes them): 256 MiB of a
        // segment against the 64 MiB bound ends the child the same way.
        #expect(try attack(host, "shm", "8") == "done")
        let shared = #expect(throws: IsolatedCallError.self) { try attack(host, "shm", "256") }
        #expect(shared?.code == .pluginOutOfMemory, "\(String(describing: shared))")
        #expect(try attack(host, "allocate", "1") == "wrote 1 MiB")
        #expect(resources(host)?.outOfMemoryKills == 2)
        // The host's own memory stays flat through 768 MiB of attacks (in
        // process they would add 512 MiB; other tests share this process).
        let grown = (ProcessUsage.of(getpid())?.memory ?? 0) - hostMemory
        #expect(grown < 256 << 20, "the host grew by \(grown >> 20) MiB")
    }

    @Test(.enabled(if: bounded || Tools.isCI, "no cgroup for this process's children (not root, no delegation)"))
    func aSpinnerGetsItsCPUQuotaAndTheOtherPluginsKeepAnswering() throws {
        let dir = try TemporaryDirectory()
        let host = try host(dir, limits: .init(cpuCores: 0.25), fixtures: ["SandboxAttacks", "SandboxNeeds"])
        defer { host.shutdown() }
        #expect(try attack(host, plugin: "fixture.sandbox-needs", "unknown") == "unknown attack")
        let pid = try #require(host.snapshot().first { $0.id == "fixture.sandbox-attacks" }?.isolation?.pid)
        // The child's cgroup holds a quarter of a core per 100 ms period.
        let cpu = try #require(Self.cgroups.folders["cpu"] ?? Self.cgroups.folders["v2"])
        let leaf = try #require(leaves(of: pid).first { $0.hasPrefix(cpu) })
        let quota = (try? String(contentsOfFile: leaf + "/cpu.cfs_quota_us", encoding: .utf8)) ?? (try? String(contentsOfFile: leaf + "/cpu.max", encoding: .utf8))
        #expect(quota?.hasPrefix("25000") == true, "\(String(describing: quota))")
        // While it spins (it says so through a FIFO), the other plugin answers.
        let stop = dir.file("stop-spinning")
        #expect(mkfifo(stop + ".ready", 0o600) == 0)
        let spun = Mutex<String?>(nil), done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            spun.withLock { $0 = try? attack(host, "spin", stop) }
            done.leave()
        }
        let ready = open(stop + ".ready", O_RDONLY)
        var byte: UInt8 = 0
        #expect(read(ready, &byte, 1) == 1)
        close(ready)
        #expect(try attack(host, plugin: "fixture.sandbox-needs", "unknown") == "unknown attack")
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        done.wait()
        #expect(spun.withLock { $0 }?.hasPrefix("spun ") == true, "\(String(describing: spun.withLock { $0 }))")
        #expect((resources(host)?.cpuSeconds ?? 0) > 0)
    }

    /// A leaf is made ahead for the next child with the last bounds; a
    /// child with other bounds gets its own written over them, a raised
    /// memory bound too (v1 keeps memory below memory+swap at each write).
    @Test(.enabled(if: bounded || Tools.isCI, "no cgroup for this process's children (not root, no delegation)"))
    func aLeafMadeAheadTakesTheNextChildsBounds() throws {
        let cgroups = Self.cgroups
        let first = try #require(cgroups.leaf(memory: 64 << 20, tasks: 32, cpuCores: nil))
        first.settled()
        cgroups.settle()
        let second = try #require(cgroups.leaf(memory: 1 << 30, tasks: 512, cpuCores: nil))
        defer { [first, second].forEach { $0.remove() } }
        let usage = second.usage()
        let memory = try #require(second.folders["memory"] ?? second.folders["v2"])
        let written = ChildCgroup.number(memory + (cgroups.version == 2 ? "/memory.max" : "/memory.limit_in_bytes"))
        #expect(written == 1 << 30, "\(String(describing: written))")
        let tasks = try #require(second.folders["pids"] ?? second.folders["v2"])
        #expect(ChildCgroup.number(tasks + "/pids.max") == 512)
        // A bound the next child does not set is lifted, not left as it was.
        second.settled()
        cgroups.settle()
        let third = try #require(cgroups.leaf(memory: nil, tasks: 512, cpuCores: nil))
        defer { third.remove() }
        let lifted = try #require(third.folders["memory"] ?? third.folders["v2"])
        let unbounded = ChildCgroup.number(lifted + (cgroups.version == 2 ? "/memory.max" : "/memory.limit_in_bytes"))
        #expect((unbounded ?? .max) > 1 << 40, "\(String(describing: unbounded))")
        #expect(usage.boundBy.hasPrefix("cgroup v"))
    }

    /// cgroup v2, where this machine has it: its unified hierarchy gives no
    /// controllers here (every v1 one is taken), so no bound can be tested,
    /// but what v2 does without them is: a leaf per child, placement, CPU
    /// time from cpu.stat, `populated` in cgroup.events, cgroup.kill ending
    /// what the child started in another session, removal.
    @Test(.enabled(if: (getuid() == 0 && CgroupMounts.current().v2 != nil) || Tools.isCI, "no cgroup2 mount this user may write"))
    func cgroupV2PlacesCountsAndKillsWhatAChildStarted() throws {
        var mounts = CgroupMounts.current()
        mounts.v1 = [:]
        let v2 = try #require(mounts.v2)
        let cgroups = ChildCgroups(mounts: mounts, pid: getpid())
        let folder = try #require(cgroups.folders["v2"])
        defer { ChildCgroups.removeFolder(folder) }
        #expect(cgroups.version == 2 && folder.hasPrefix(v2.folder))
        for bound in ChildCgroups.Bound.all where !v2.controllers.contains(ChildCgroups.controllerOf[bound] ?? "") {
            #expect(cgroups.missing[bound]?.contains("controller") == true, "\(bound): \(String(describing: cgroups.missing[bound]))")
        }
        let leaf = try #require(cgroups.leaf(memory: 1 << 30, tasks: 64, cpuCores: nil))
        #expect(leaf.joinedByChild == nil && leaf.populated == false)
        // Two processes in the leaf, one in a session of its own (what a
        // plugin's child may start): this process's children, so it reaps
        // both (an orphan's zombie, reaped by whoever adopts it, would keep
        // the leaf populated on kernels that unlink a task when it is reaped).
        func started(ownSession: Bool) -> pid_t {
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            if ownSession { posix_spawnattr_setflags(&attributes, 0x80) }  // POSIX_SPAWN_SETSID (glibc 2.26)
            var pid: pid_t = 0
            let arguments = [strdup("/bin/sleep"), strdup("600"), nil]
            defer { arguments.forEach { free($0) } }
            return posix_spawn(&pid, "/bin/sleep", nil, &attributes, arguments, environ) == 0 ? pid : -1
        }
        let plain = started(ownSession: false), alone = started(ownSession: true)
        #expect(plain > 0 && alone > 0 && getsid(alone) == alone && getsid(plain) == getsid(0))
        #expect(leaf.place(plain).isEmpty && leaf.place(alone).isEmpty)
        let leafPath = try #require(leaf.folders["v2"])
        let membership = try String(contentsOfFile: "/proc/\(alone)/cgroup", encoding: .utf8)
        let unified = membership.split(separator: "\n").first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) }
        #expect(unified.map { $0.contains("/plugboard-") && leafPath.hasSuffix($0) } == true, "\(membership)")
        #expect(leaf.populated == true && leaf.usage().cpuSeconds != nil, "\(leaf.usage())")
        // cgroup.kill ends both, the one in a session of its own too.
        let killed = leaf.killAll()
        #expect(killed)
        if !killed { [plain, alone].forEach { kill($0, SIGKILL) } }
        for pid in [plain, alone] {
            var status: Int32 = 0
            #expect(waitpid(pid, &status, 0) == pid && status & 0x7f == SIGKILL)
        }
        // Both reaped: none of them is in the leaf. (`populated` was seen
        // to stay 1 for 50 s in one make check, then the leaf was gone: not
        // understood yet, so the leaf's own list is what is asserted.)
        let left = (try? String(contentsOfFile: leafPath + "/cgroup.procs", encoding: .utf8)) ?? ""
        #expect(!left.split(separator: "\n").contains { [String(plain), String(alone)].contains(String($0)) }, "\(left)")
        leaf.remove()
        #expect(!FileManager.default.fileExists(atPath: leafPath))
    }

    /// An ordinary user's host keeps threads for itself: its child's
    /// RLIMIT_NPROC is the user's limit less the reserve, so a thread bomb
    /// stops short of it (the limit counts every thread of the user) and
    /// the host answers; in process, the bomb takes nearly all.
    @Test(.enabled(if: SandboxTests.nobodyCanRunPlugboard || Tools.isCI, "an ordinary user cannot run the tool"))
    func anOrdinaryUsersChildLeavesTheHostItsReserve() throws {
        try asNobody { setup in
            let tool = try #require(SandboxTests.toolForNobody)
            func bomb(_ level: [String]) throws -> (status: Int32, made: Int) {
                let command = ["exec prlimit --nproc=800:800 /usr/bin/setpriv", SandboxTests.nobody.joined(separator: " "), tool, "run attack --plugins", setup.plugins]
                    + level + ["--data", setup.dir.file("data"), "--cache", setup.dir.file("cache"), "--allow-unsafe-directories -- threads 5000"]
                let result = try runProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", command.joined(separator: " ")])
                let words = result.stdout.split(separator: " ")
                return (result.status, words.count > 1 ? Int(words[1]) ?? -1 : -1)
            }
            let isolated = try bomb(["--isolate-all"])
            #expect(isolated.status == 0 && isolated.made > 0 && isolated.made < 800 - ChildBounds.reserve, "\(isolated)")
            let inProcess = try bomb([])
            #expect(inProcess.made > 800 - ChildBounds.reserve, "\(inProcess)")
        }
    }

    /// An ordinary user's host gets no cgroup here (only root may make one
    /// under v1): bounds that must hold refuse the start with their code,
    /// naming each bound and why; best-effort ones start the plugin.
    @Test(.enabled(if: SandboxTests.nobodyCanRunPlugboard || Tools.isCI, "an ordinary user cannot run the tool"))
    func requiredBoundsWithoutACgroupRefuseTheStart() throws {
        try asNobody { setup in
            func run(_ extra: [String]) throws -> ProcessResult {
                try runProcess(URL(fileURLWithPath: "/usr/bin/setpriv"), SandboxTests.nobody + [try #require(SandboxTests.toolForNobody),
                    "run", "attack", "--plugins", setup.plugins, "--isolate-all", "--data", setup.dir.file("data"), "--cache", setup.dir.file("cache"),
                    "--allow-unsafe-directories"] + extra + ["--", "unknown"])
            }
            let required = try run(["--resource-bounds", "required"])
            #expect(required.status == 1 && required.stderr.contains("[resource-bounds-unavailable]"), "\(required.stderr)")
            #expect(required.stderr.contains("memory: ") && required.stderr.contains("tasks: "), "\(required.stderr)")
            let bestEffort = try run([])
            #expect(bestEffort.status == 0 && bestEffort.stdout == "unknown attack\n", "\(bestEffort.stdout)\(bestEffort.stderr)")
            // doctor says so, and what holds a child instead.
            let doctor = try runProcess(URL(fileURLWithPath: "/usr/bin/setpriv"), SandboxTests.nobody + [try #require(SandboxTests.toolForNobody), "doctor", "--json"])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any], "\(doctor.stderr)")
            #expect((report["bounds"] as? [String])?.isEmpty == true && (report["boundsMissing"] as? [String])?.count == 3, "\(report)")
            #expect((report["boundsInstead"] as? [String])?.contains { $0.hasPrefix("tasks: the host's sampler") } == true, "\(report)")
        }
    }

    /// Where no cgroup counts tasks (an ordinary user's host here), the
    /// host's sampler ends a child holding more threads than its bound:
    /// the call fails with its own code and the host lives. (`timeout` only
    /// ends the run if the child is never ended, which fails the test.)
    @Test(.enabled(if: SandboxTests.nobodyCanRunPlugboard || Tools.isCI, "an ordinary user cannot run the tool"))
    func withoutACgroupTheSamplerEndsAChildPastItsTasksBound() throws {
        try asNobody { setup in
            let settings = setup.dir.file("settings.json")
            try Data(#"{"plugins": {"fixture.sandbox-attacks": {"resources": {"tasks": 32}}}}"#.utf8).write(to: URL(fileURLWithPath: settings))
            chmod(settings, 0o644)
            let result = try runProcess(URL(fileURLWithPath: "/usr/bin/timeout"), ["120", "/usr/bin/setpriv"] + SandboxTests.nobody + [
                try #require(SandboxTests.toolForNobody), "run", "attack", "--plugins", setup.plugins, "--isolate-all", "--config", settings,
                "--data", setup.dir.file("data"), "--cache", setup.dir.file("cache"), "--allow-unsafe-directories", "--", "threads-held", "200"])
            #expect(result.status == 1 && result.stderr.contains("[plugin-resource-exhausted]"), "\(result.status) \(result.stderr)")
            #expect(result.stderr.contains("past its bound of 32"), "\(result.stderr)")
        }
    }

    /// Before a child runs, `inspect` shows the bounds it would get here
    /// (the settings file's per plugin) and what holds them.
    @Test func inspectShowsTheBoundsAChildWouldGetAndWhatHoldsThem() throws {
        let dir = try TemporaryDirectory()
        let settings = dir.file("settings.json")
        try Data(#"{"plugins": {"fixture.sandbox-attacks": {"resources": {"tasks": 64, "memory": 268435456}}}}"#.utf8).write(to: URL(fileURLWithPath: settings))
        let arguments = ["inspect", try Fixtures.library("SandboxAttacks").path, "--isolate-all", "--config", settings, "--cache", dir.file("cache")]
        let inspected = try runProcess(Fixtures.executable("plugboard"), arguments + ["--json"])
        let record = try #require(try JSONSerialization.jsonObject(with: Data(inspected.stdout.utf8)) as? [String: Any], "\(inspected.stderr)")
        let resources = try #require((record["isolation"] as? [String: Any])?["resources"] as? [String: Any], "\(inspected.stdout)")
        #expect(resources["tasksLimit"] as? Int == 64 && resources["boundBy"] as? String == Self.cgroups.version.map { "cgroup v\($0)" }, "\(resources)")
        #expect(resources["memoryLimit"] as? Int == (Self.cgroups.reachable.contains(.memory) ? 268435456 : nil), "\(resources)")
        let text = try runProcess(Fixtures.executable("plugboard"), arguments)
        #expect(text.stdout.contains("memory 256 MiB, tasks 64 (cgroup v"), "\(text.stdout)")
    }

    /// `body` with a SandboxTests set-up for nobody (its folders, and a
    /// decoy process, ended after).
    func asNobody(_ body: (SandboxTests.Setup) throws -> Void) throws {
        let (setup, listener) = try SandboxTests().setUp(as: .nobody)
        defer {
            close(listener)
            kill(setup.decoy, SIGKILL)
            var status: Int32 = 0
            waitpid(setup.decoy, &status, 0)
        }
        try body(setup)
    }

    /// Where this machine gives no cgroup (here: a process whose folders
    /// are read from an empty mount table), each bound says why.
    @Test func withoutACgroupEachBoundSaysWhatIsMissing() {
        let none = ChildCgroups(mounts: CgroupMounts(), pid: getpid())
        #expect(none.reachable.isEmpty)
        let bounds = ChildBounds(PluginIsolation.Limits(cpuCores: 1))
        #expect(bounds.unreachable(in: none).count == 3)
        #expect(bounds.unreachable(in: none).allSatisfy { $0.contains("mounts no cgroup hierarchy") })
        #expect(bounds.leaf(in: none) == nil)
        // The sampler holds the tasks bound there; /proc gives the figures.
        #expect(bounds.sampledTasks(in: none) == 512 && bounds.sampledTasks(in: Self.cgroups) == (Self.cgroups.reachable.contains(.tasks) ? nil : 512))
        let own = ProcessUsage.of(getpid())
        #expect((own?.memory ?? 0) > 0 && (own?.peakMemory ?? 0) >= (own?.memory ?? 0) && (own?.tasks ?? 0) >= 1 && own?.cpuSeconds != nil, "\(String(describing: own))")
        #expect((ProcessUsage.threads(of: getpid()) ?? 0) >= 1 && ProcessUsage.of(-1) == nil)
    }

    /// The mount table as this machine (v1), a systemd machine (v2) and a
    /// container (its cgroup is the mount's root) write it.
    @Test func theMountsAreReadAsEachKindOfMachineWritesThem() {
        let v1 = CgroupMounts.parse(
            mountinfo: """
                32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
                35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
                39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
                41 31 0:38 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
                """,
            membership: "4:memory:/process_api/8d52\n8:pids:/\n1:cpu,cpuacct:/user.slice\n0::/\n")
        #expect(v1.v1["memory"] == "/sys/fs/cgroup/memory/process_api/8d52")
        #expect(v1.v1["pids"] == "/sys/fs/cgroup/pids")
        #expect(v1.v1["cpuacct"] == "/sys/fs/cgroup/cpu,cpuacct/user.slice")
        let container = CgroupMounts.parse(
            mountinfo: "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
            membership: "4:memory:/docker/abc/inner\n")
        #expect(container.v1["memory"] == "/sys/fs/cgroup/memory/inner")
        let unified = CgroupMounts.parse(
            mountinfo: "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
            membership: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/host.scope\n")
        #expect(unified.v1.isEmpty)
        #expect(unified.v2?.folder == "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/host.scope")
        #expect(CgroupMounts.unescape("/a\\040b") == "/a b")
    }
}
