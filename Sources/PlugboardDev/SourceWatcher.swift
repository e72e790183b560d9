import Dispatch
import FoundationEssentials
import PlugboardHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Watches a package's sources and reports one change per save.
///
/// - Linux: inotify on every directory under the root (new directories are
///   added as they appear); elsewhere, or when inotify is unavailable or
///   `polling` is asked for, files' stamps (inode, size, times) are polled.
/// - A change is reported as soon as a file is complete: written and closed,
///   renamed into place, removed (with inotify), together with the events
///   that follow within ``settle`` milliseconds, so an editor's save (write
///   a temporary file, rename it over the original, touch attributes) is
///   one change. No quiet period is
///   waited for: a save is built at once, and what arrives while it builds is
///   the next change (``pendingChange()``). Writes without a close (a file
///   being written, or mapped) and polling still wait until `quiet` seconds
///   pass without an event.
/// - Directories named in `ignoring` (`.build`, ...) and editor scratch files
///   (hidden files, `~` backups, `.swp`, vim's `4913`) are not changes.
/// - Nor is a file that was only closed (no other event) and whose inode,
///   size and times are those it had when the last change was reported: a
///   close without a write. A process that forked while an editor held the
///   file open for writing closes its copy of the descriptor whenever it
///   ends, and inotify names the file as it is called then (the saved file,
///   once the temporary one was renamed).
public final class SourceWatcher: Sendable {
    public struct Change: Sendable {
        /// Paths that changed (relative to the root).
        public let paths: [String]
        /// Milliseconds from the first event to the change being reported.
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
    /// Polling: signalled by ``stop()``, so the wait between two looks ends at once.
    private let stopping = DispatchSemaphore(value: 0)
    /// Polling: the state last seen, kept across calls so saves made while
    /// the caller was busy (building) are still seen.
    private let lastSnapshot = Mutex<[String: Stamp]?>(nil)
    /// inotify: what was read but not reported yet, kept across calls.
    private let gathered = Mutex(Gathered())
    /// inotify: each file as it was when a change was last reported (at
    /// the start, the whole tree), keyed by absolute path.
    private let reported = Mutex<[String: Stamp]>([:])

    struct Gathered {
        var changed: Set<String> = []
        /// Paths created within this change.
        var created: Set<String> = []
        /// Paths with an event besides a close: written, created, renamed,
        /// removed (a change whatever their stamp says: a same-size write
        /// within the file system's time granularity keeps it).
        var written: Set<String> = []
        /// A file was completed (closed after writing, renamed, removed).
        var complete = false
        var first: ContinuousClock.Instant?

        mutating func take() -> Change? {
            defer { self = Gathered() }
            guard let first, !changed.isEmpty else { return nil }
            return Change(paths: changed.sorted(), detectMilliseconds: first.millisecondsElapsed)
        }
    }

    public init(root: String, ignoring: Set<String> = [".build", ".swiftpm", ".git"], quiet: Double = 0.15, polling: Bool = false) {
        self.root = PluginDirectory.absolutePath(root)
        self.ignoring = ignoring
        self.quiet = quiet
        inotify = polling ? nil : InotifyEvents()
        let watching = inotify != nil
        mode = watching ? "inotify" : "polling"
        if watching {
            let watched = directories()
            for directory in watched { addWatch(directory) }
            // After the watches: a write in between is in the snapshot and still
            // reported (its events are more than a close).
            let stamps = snapshot(of: watched)
            reported.withLock { $0 = stamps }
        } else {
            lastSnapshot.withLock { $0 = snapshot() }
        }
    }

    /// Makes ``waitForChange()`` return nil soon (from any thread or a signal handler's queue).
    public func stop() {
        stopped.store(true, ordering: .relaxed)
        stopping.signal()
    }

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

    /// Events that end a write: the file is whole (a created file is not yet;
    /// a created directory is).
    private static let completing = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)

    /// After a file is complete, how long to keep reading while events keep
    /// coming: the rest of one save (`sed -i` and editors close a temporary
    /// file, then rename it over the source, within microseconds) joins the
    /// same change instead of superseding its build.
    static let settle: Int32 = 10

    private func waitWithInotify() -> Change? {
        while !stopped.load(ordering: .relaxed) {
            let waiting = gathered.withLock { $0.first == nil } ? Int32(200) : Int32(quiet * 1000)
            guard let events = inotify?.wait(milliseconds: waiting) else { return nil }
            if events.isEmpty {
                // Quiet after writes without a close: report them; scratch files only: forget them.
                if gathered.withLock({ $0.first != nil }), let change = takeWritten() { return change }
                continue
            }
            absorb(events)
            if let change = pendingChange() { return change }
        }
        return nil
    }

    /// What completed since the last change was reported, without waiting:
    /// the events already queued are read first. Nil when nothing did (a
    /// write still in progress stays gathered for ``waitForChange()``).
    public func pendingChange() -> Change? {
        guard inotify != nil else { return nil }
        while let events = inotify?.wait(milliseconds: 0), !events.isEmpty { absorb(events) }
        guard gathered.withLock({ $0.complete }) else { return nil }
        while let events = inotify?.wait(milliseconds: Self.settle), !events.isEmpty { absorb(events) }
        return takeWritten()
    }

    /// What was gathered, less what was not written: a temporary file
    /// created and renamed away within the change, and a file only closed
    /// and just as it was when the last change was reported. Nil when
    /// nothing is left.
    private func takeWritten() -> Change? {
        gathered.withLock { gathered in
            let now = Dictionary(uniqueKeysWithValues: gathered.changed.map { ($0, Self.stamp(of: "\(root)/\($0)")) })
            reported.withLock { reported in
                gathered.changed = gathered.changed.filter { path in
                    guard let stamp = now[path] ?? nil else {
                        // Gone (or not a file): a change, unless it was created within this one.
                        return !gathered.created.contains(path)
                    }
                    return gathered.written.contains(path) || reported["\(root)/\(path)"] != stamp
                }
                for path in gathered.changed { reported["\(root)/\(path)"] = now[path] ?? nil }
            }
            return gathered.take()
        }
    }

    private func absorb(_ events: [InotifyEvents.Event]) {
        for event in events {
            gathered.withLock { if $0.first == nil { $0.first = .now } }
            if event.overflowed {
                // Events were lost: treat it as a change of everything.
                gathered.withLock { $0.changed.insert("(inotify queue overflowed)"); $0.complete = true }
                continue
            }
            guard let directory = watches.withLock({ $0[event.watch] }) else { continue }
            let path = "\(directory)/\(event.name)"
            guard isRelevant(event.name) else { continue }
            var paths = [relative(path)]
            // A directory moved in or created: watch it, and count what it
            // already holds (written before the watch existed).
            if event.isDirectory, event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                for sub in directories(under: path) {
                    addWatch(sub)
                    for file in (try? FileManager.default.contentsOfDirectory(atPath: sub)) ?? [] where isRelevant(file) {
                        paths.append(relative("\(sub)/\(file)"))
                    }
                }
            }
            let completes = event.mask & Self.completing != 0 || (event.isDirectory && event.mask & UInt32(IN_CREATE) != 0)
            let creates = !event.isDirectory && event.mask & UInt32(IN_CREATE) != 0
            let writes = event.mask & ~UInt32(IN_CLOSE_WRITE | IN_ISDIR) != 0
            gathered.withLock { gathered in
                gathered.changed.formUnion(paths)
                if creates { gathered.created.formUnion(paths) }
                if writes { gathered.written.formUnion(paths) }
                if completes { gathered.complete = true }
            }
        }
    }

    // MARK: - Polling

    private func waitByPolling() -> Change? {
        var before = lastSnapshot.withLock { $0 } ?? snapshot()
        defer { lastSnapshot.withLock { $0 = before } }
        var changed: Set<String> = []
        var first: ContinuousClock.Instant?
        var lastChange = ContinuousClock.now
        while !stopped.load(ordering: .relaxed) {
            // Where inotify is missing the only way to see a change is to look
            // again: the interval is the poll, and a stop ends it early.
            let interval: Duration = first == nil ? .milliseconds(300) : .milliseconds(Int(quiet * 500))
            if stopping.wait(until: .now + interval) { break }
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

    /// What a write, a rename over the file or a change of attributes moves.
    struct Stamp: Equatable, Sendable {
        let inode: UInt
        let modified: Int
        let changed: Int
        let size: Int

        init(_ info: stat) {
            inode = UInt(info.st_ino)
            modified = Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec)
            changed = Int(info.st_ctim.tv_sec) * 1_000_000_000 + Int(info.st_ctim.tv_nsec)
            size = Int(info.st_size)
        }
    }

    /// A regular file's stamp; nil for anything else, or nothing.
    static func stamp(of path: String) -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Stamp(info)
    }

    /// The stamps of the relevant files in `folders` (by default, all of them now).
    private func snapshot(of folders: [String]? = nil) -> [String: Stamp] {
        var stamps: [String: Stamp] = [:]
        for directory in folders ?? directories() {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { continue }
            for name in names where isRelevant(name) {
                let path = "\(directory)/\(name)"
                if let stamp = Self.stamp(of: path) { stamps[path] = stamp }
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
                let path = "\(directory)/\(name)"
                // Followed, as FileManager's fileExists(atPath:isDirectory:) does.
                var status = stat()
                if stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
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
