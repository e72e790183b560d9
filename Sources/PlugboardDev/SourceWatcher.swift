import Foundation
import PlugboardHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Watches a package's sources and reports one change per save.
///
/// - Linux: inotify on every directory under the root (new directories are
///   added as they appear); elsewhere, or when inotify is unavailable or
///   `polling` is asked for, modification times are polled.
/// - Editors save in several steps (write a temporary file, rename it over
///   the original, touch attributes): events are gathered until `quiet`
///   seconds pass without one, so a save is one change. The default, 150 ms,
///   is most of what the watcher adds to save-to-live; 30 ms was tried and
///   split one save into two changes in 2 of 7 runs of the dev-loop test.
/// - Directories named in `ignoring` (`.build`, ...) and editor scratch files
///   (hidden files, `~` backups, `.swp`, vim's `4913`) are not changes.
public final class SourceWatcher: Sendable {
    public struct Change: Sendable {
        /// Paths that changed (relative to the root).
        public let paths: [String]
        /// Milliseconds from the first event to the end of the quiet period.
        public let detectMilliseconds: Double
    }

    public let root: String
    public let ignoring: Set<String>
    public let quiet: Double
    /// "inotify" or "polling".
    public let mode: String
    private let inotify: InotifyEvents?
    private let watches = Mutex<[Int32: String]>([:])
    private let stopped = Atomic<Bool>(false)
    /// Polling: the state last seen, kept across calls so saves made while
    /// the caller was busy (building) are still seen.
    private let lastSnapshot = Mutex<[String: Stamp]?>(nil)

    public init(root: String, ignoring: Set<String> = [".build", ".swiftpm", ".git"], quiet: Double = 0.15, polling: Bool = false) {
        self.root = PluginDirectory.absolutePath(root)
        self.ignoring = ignoring
        self.quiet = quiet
        inotify = polling ? nil : InotifyEvents()
        let watching = inotify != nil
        mode = watching ? "inotify" : "polling"
        if watching { for directory in directories() { addWatch(directory) } } else { lastSnapshot.withLock { $0 = snapshot() } }
    }

    /// Makes ``waitForChange()`` return nil soon (from any thread or a signal handler's queue).
    public func stop() { stopped.store(true, ordering: .relaxed) }

    /// Whether ``stop()`` was called.
    public var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// Blocks until a change settles; nil once ``stop()`` was called.
    public func waitForChange() -> Change? {
        inotify != nil ? waitWithInotify() : waitByPolling()
    }

    // MARK: - inotify

    private func addWatch(_ directory: String) {
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_MODIFY)
        if let wd = inotify?.add(directory, mask: mask) { watches.withLock { $0[wd] = directory } }
    }

    private func waitWithInotify() -> Change? {
        var changed: Set<String> = []
        var first: ContinuousClock.Instant?
        while !stopped.load(ordering: .relaxed) {
            guard let events = inotify?.wait(milliseconds: first == nil ? 200 : Int32(quiet * 1000)) else { return nil }
            if events.isEmpty {
                if let start = first {
                    if !changed.isEmpty { return Change(paths: changed.sorted(), detectMilliseconds: start.millisecondsElapsed) }
                    first = nil  // only irrelevant events (editor scratch files)
                }
                continue
            }
            for event in events {
                if first == nil { first = .now }
                if event.overflowed {
                    // Events were lost: treat it as a change of everything.
                    changed.insert("(inotify queue overflowed)")
                    continue
                }
                guard let directory = watches.withLock({ $0[event.watch] }) else { continue }
                let path = "\(directory)/\(event.name)"
                guard isRelevant(event.name) else { continue }
                if event.isDirectory {
                    // A directory moved in or created: watch it, and count what
                    // it already holds (written before the watch existed).
                    if event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                        for sub in directories(under: path) {
                            addWatch(sub)
                            for file in (try? FileManager.default.contentsOfDirectory(atPath: sub)) ?? [] where isRelevant(file) {
                                changed.insert(relative("\(sub)/\(file)"))
                            }
                        }
                    }
                    changed.insert(relative(path))
                    continue
                }
                changed.insert(relative(path))
            }
        }
        return nil
    }

    // MARK: - Polling

    private func waitByPolling() -> Change? {
        var before = lastSnapshot.withLock { $0 } ?? snapshot()
        defer { lastSnapshot.withLock { $0 = before } }
        var changed: Set<String> = []
        var first: ContinuousClock.Instant?
        var lastChange = ContinuousClock.now
        while !stopped.load(ordering: .relaxed) {
            if first == nil { usleep(300_000) } else { usleep(UInt32(quiet * 500_000)) }
            let now = snapshot()
            let differing = Set(now.keys).union(before.keys).filter { now[$0] != before[$0] }
            before = now
            if !differing.isEmpty {
                changed.formUnion(differing.map(relative))
                lastChange = .now
                if first == nil { first = .now }
            } else if let first, ContinuousClock.now - lastChange >= .milliseconds(Int(quiet * 1000)) {
                return Change(paths: changed.sorted(), detectMilliseconds: first.millisecondsElapsed)
            }
        }
        return nil
    }

    struct Stamp: Equatable, Sendable {
        let modified: Int
        let size: Int
    }

    private func snapshot() -> [String: Stamp] {
        var stamps: [String: Stamp] = [:]
        for directory in directories() {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { continue }
            for name in names where isRelevant(name) {
                var info = stat()
                let path = "\(directory)/\(name)"
                guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
                stamps[path] = Stamp(modified: Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec), size: Int(info.st_size))
            }
        }
        return stamps
    }

    // MARK: - Paths

    private func directories(under start: String? = nil) -> [String] {
        var result: [String] = []
        var pending = [start ?? root]
        while let directory = pending.popLast() {
            result.append(directory)
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { continue }
            for name in names where !ignoring.contains(name) && !name.hasPrefix(".") {
                var isDirectory: ObjCBool = false
                let path = "\(directory)/\(name)"
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                    pending.append(path)
                }
            }
        }
        return result
    }

    private func isRelevant(_ name: String) -> Bool {
        !(name.isEmpty || name.hasPrefix(".") || name.hasSuffix("~") || name.hasSuffix(".swp") || name.hasSuffix(".swx")
            || name == "4913" || ignoring.contains(name))
    }

    private func relative(_ path: String) -> String {
        path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
    }
}
