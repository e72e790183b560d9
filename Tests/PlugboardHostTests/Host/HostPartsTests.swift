import Foundation
import Plugboard
@testable import PlugboardHost
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
        let scanner = ScannerSettings(executable: plugboard)
        let host = PluginHost(configuration: .init(cacheDirectory: cache.path, scanner: scanner))
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
        let spare = try #require(host.lifecycle.spareScanner.waitingPID)
        #expect(childrenOfThread.withLock { $0 }.contains(started.pid), "the sentinel is that thread's child")
        #expect(!childrenOfThread.withLock { $0 }.contains(spare), "the spare is a child of the thread that reloaded")
        // The spare was killed then too if the ended thread had started it: a
        // process with SIGKILL pending never answers, so a scan it serves
        // (no new process started) shows it is alive.
        #expect(host.lifecycle.spareScanner.waitingPID != nil)
        let (outcomes, processes) = PluginScanner(settings: scanner).scan([.init(file: v1)], spare: host.lifecycle.spareScanner)
        #expect(processes == 0, "the spare died with the thread that asked for it: \(outcomes)")
        if case .plugin? = outcomes.first {} else { Issue.record("\(outcomes)") }
        #expect(host.reload(id, from: v1).isReloaded)
    }

    /// A host keeps the latest diagnostics only, and hands every one to its sink.
    @Test func diagnosticsAreBoundedAndEveryOneReachesTheSink() throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let settings = try dir.write(Data(#"{ "plugins": { "a.one": {}, "a.two": {}, "a.three": {}, "a.four": {}, "a.five": {} } }"#.utf8), as: "host.json")
        let heard = Mutex<[String]>([])
        var configuration = PluginHost.Configuration(
            pluginsDirectory: dir.path, settings: HostSettings.load(from: settings), cacheDirectory: cache.path)
        configuration.diagnosticsLimit = 3
        configuration.diagnosticSink = { diagnostic in heard.withLock { $0.append(diagnostic.keyPath ?? "") } }
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
