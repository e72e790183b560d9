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

/// The host's parts keep no hidden process-wide effects: spare scanners
/// outlive the thread that asked for them, diagnostics are bounded.
@Suite struct HostPartsTests {
    /// Runs `body` on a new POSIX thread and returns once that thread has
    /// ended (joined): what a short-lived worker thread of a host does.
    func onThreadThatEnds(_ body: @escaping @Sendable () -> Void) {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let created = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        precondition(created == 0)
        pthread_join(thread, nil)
    }

    /// A scanner child dies with the thread that started it
    /// (`PR_SET_PDEATHSIG`). A reload run on a thread that then ends leaves
    /// a spare that still serves the next reload. A sentinel scanner started
    /// on the same thread shows the thread's end was signalled.
    @Test func aSpareScannerOutlivesTheThreadThatReloaded() throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let v1 = try dir.copy(Fixtures.library("ReloadV1"), as: "libReload.so")
        let v2 = try dir.copy(Fixtures.library("ReloadV2"), as: "libReload2.so")
        let plugboard = try Fixtures.executable("plugboard").path
        var scanner = ScannerSettings(executable: plugboard)
        // The scan below reads v1 where it lies, outside the host's private
        // copies: a sandboxed spare could not (and that is not what this tests).
        scanner.sandbox = nil
        let host = PluginHost(configuration: .with(cacheDirectory: cache.path, scanner: scanner))
        defer { host.shutdown() }
        host.declare(Commands.self)
        let id = try #require(host.load(files: [v1]).first?.id)
        let sentinel = Mutex<StartedScanner?>(nil)
        let first = Mutex<ReloadOutcome?>(nil)
        /// The children of the reloading thread itself, once the reload is done.
        let childrenOfThread = Mutex<[pid_t]>([])
        onThreadThatEnds {
            sentinel.withLock { $0 = try? StartedScanner.start(plugboard) }
            let outcome = host.reload(id, from: v2)
            first.withLock { $0 = outcome }
            let file = "/proc/thread-self/children"
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            childrenOfThread.withLock { $0 = text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) } }
        }
        #expect(first.withLock { $0?.isReloaded } == true, "\(String(describing: first.withLock { $0 }))")
        let started = try #require(sentinel.withLock { $0 })
        defer { started.close() }
        var status: Int32 = 0
        // The event: the thread's end killed what it started.
        #expect(waitpid(started.pid, &status, 0) == started.pid && (status & 0x7f) == SIGKILL)
        // Not started by the thread that ended (a child dies with the thread
        // that started it, once its PR_SET_PDEATHSIG is set).
        host.lifecycle.spareScanner.awaitFilled()
        let spare = try #require(host.lifecycle.spareScanner.waitingPID)
        #expect(childrenOfThread.withLock { $0 }.contains(started.pid), "the sentinel is that thread's child")
        #expect(!childrenOfThread.withLock { $0 }.contains(spare), "the spare is a child of the thread that reloaded")
        // The spare was killed then too if the ended thread had started it: a
        // process with SIGKILL pending never answers, so a scan it serves
        // (no new process started) shows it is alive.
        #expect(host.lifecycle.spareScanner.waitingPID != nil)
        let (outcomes, processes, _) = PluginScanner(settings: scanner).scan([.init(file: v1)], spare: host.lifecycle.spareScanner)
        #expect(processes == 0, "the spare died with the thread that asked for it: \(outcomes)")
        if case .plugin? = outcomes.first {} else { Issue.record("\(outcomes)") }
        #expect(host.reload(id, from: v1).isReloaded)
    }

    /// Without XDG_RUNTIME_DIR the images folders go in this user's own
    /// folder of the temp directory, never in a name another user holds.
    @Test func theDefaultImagesParentIsTheUsersOwnFolder() throws {
        let temporary = try TemporaryDirectory()
        let own = try #require(PrivateCopies.userFolder(in: temporary.path))
        #expect(own == temporary.file("plugboard-\(geteuid())-images"))
        let mode = (try FileManager.default.attributesOfItem(atPath: own)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o700)
        #expect(PrivateCopies.userFolder(in: temporary.path) == own, "made once, then used")
        // Taken by someone else's symbolic link, or open to others: not used.
        try FileManager.default.removeItem(atPath: own)
        try FileManager.default.createSymbolicLink(atPath: own, withDestinationPath: temporary.path)
        #expect(PrivateCopies.userFolder(in: temporary.path) == nil)
        try FileManager.default.removeItem(atPath: own)
        try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        chmod(own, 0o777)
        #expect(PrivateCopies.userFolder(in: temporary.path) == nil)
    }

    /// The images folder of a host that was killed (copies of every plugin
    /// it loaded) is removed by the next host that copies into the same
    /// place; a live host's folder is kept, and so is a folder without a
    /// lock file (nothing tells whether its owner lives).
    @Test func theImagesOfAKilledHostAreRemovedAtTheNextStart() throws {
        let base = try TemporaryDirectory(), dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        chmod(base.path, 0o700)  // as XDG_RUNTIME_DIR must be
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library("CommandLinger"), as: "b-linger.so")
        func folders() throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: base.path).filter { $0.hasPrefix("plugboard-images-") })
        }
        // A host process that loads its plugins, then is killed while a command runs.
        try runUntilLingeringThenKill(
            ["run", "linger", "--plugins", dir.path, "--cache", work.file("cache"), "--data", work.file("data")],
            environment: ["XDG_RUNTIME_DIR": base.path, "TMPDIR": base.path], work: work)
        let dead = try folders()
        try #require(dead.count == 1, "\(dead)")
        // One left by a version without the lock file.
        try FileManager.default.createDirectory(atPath: base.file("plugboard-images-999999-1"), withIntermediateDirectories: false)

        // A live host copying into the same place, then the next one.
        let live = PluginHost(configuration: .with(imagesDirectory: base.path, cacheDirectory: work.file("live-cache")))
        defer { live.shutdown() }
        live.declare(Commands.self)
        #expect(live.load(files: [dir.file("a.so")]).first?.status == .active)
        let afterLive = try folders()
        #expect(afterLive.isDisjoint(with: dead), "the killed host's folder is removed by the next host that copies")
        #expect(afterLive.contains("plugboard-images-999999-1"))
        let next = PluginHost(configuration: .with(imagesDirectory: base.path, cacheDirectory: work.file("next-cache")))
        defer { next.shutdown() }
        next.declare(Commands.self)
        #expect(next.load(files: [dir.file("a.so")]).first?.status == .active)
        let afterNext = try folders()
        #expect(afterLive.isSubset(of: afterNext), "a live host's folder is kept: \(afterLive) \(afterNext)")
        #expect(afterNext.count == afterLive.count + 1)
    }

    /// A host keeps the latest diagnostics only, and hands every one to its sink.
    @Test func diagnosticsAreBoundedAndEveryOneReachesTheSink() throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let settings = try dir.write(Data(#"{ "plugins": { "a.one": {}, "a.two": {}, "a.three": {}, "a.four": {}, "a.five": {} } }"#.utf8), as: "host.json")
        let heard = Mutex<[String]>([])
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: dir.path, settings: HostSettings.load(from: settings), cacheDirectory: cache.path)
        configuration.observability.diagnosticsLimit = 3
        configuration.observability.diagnosticSink = { diagnostic in heard.withLock { $0.append(diagnostic.keyPath ?? "") } }
        let host = PluginHost(configuration: configuration)
        defer { host.shutdown() }
        try host.discover()
        let all = ["plugins.a.five", "plugins.a.four", "plugins.a.one", "plugins.a.three", "plugins.a.two"]
        #expect(heard.withLock { $0 } == all)
        #expect(host.diagnostics.map { $0.keyPath ?? "" } == Array(all.suffix(3)))
    }
}

extension ReloadOutcome {
    var isReloaded: Bool {
        if case .reloaded = result { return true }
        return false
    }
}
