import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// Refreshes a host when a plugin file is installed, replaced or removed in
/// its plugins directory (and, when asked, its `lib/`): inotify, with the
/// events of one install (a rename, or a copy and its close) gathered until
/// they stop for ``quiet``. ``PluginHost/Configuration/Watching/pluginsDirectory``.
final class PluginsDirectoryWatcher: Sendable {
    /// How long the directory must stay still before a refresh.
    static let quiet: Int32 = 100
    private let events: InotifyEvents
    private let stopped = Atomic<Bool>(false)
    private let directory: String
    private let libraries: Bool
    /// The watch on the folder holding the directory: a whole set swapped in
    /// at once (`plugboard pull` exchanges a staged directory with it) is a
    /// rename there, and the directory's own watches stay on the old set.
    private let parentWatch: Int32?
    private let watches: Mutex<[Int32]>
    private static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)

    /// Nil when inotify is unavailable or `directory` cannot be watched.
    init?(directory: String, libraries: Bool) {
        guard let events = InotifyEvents() else { return nil }
        guard let own = events.add(directory, mask: Self.mask) else { return nil }
        var watches = [own]
        if libraries, let library = events.add(directory + "/" + PluginDirectory.interfaceFolder, mask: Self.mask) { watches.append(library) }
        let absolute = PluginDirectory.absolutePath(directory)
        let parent = absolute.split(separator: "/").dropLast().joined(separator: "/")
        parentWatch = events.add("/" + parent, mask: UInt32(IN_MOVED_TO | IN_CREATE))
        self.directory = absolute
        self.libraries = libraries
        self.watches = Mutex(watches)
        self.events = events
    }

    /// The directory's name in its folder.
    private var name: String { String(directory.split(separator: "/").last ?? "") }

    /// Moves the watches to what the directory's path names now.
    private func rewatch() {
        watches.withLock { watches in
            for watch in watches { events.remove(watch) }
            watches = [events.add(directory, mask: Self.mask)].compactMap { $0 }
            if libraries, let library = events.add(directory + "/" + PluginDirectory.interfaceFolder, mask: Self.mask) { watches.append(library) }
        }
    }

    /// Calls `refresh` on a thread of its own after each settled change, until ``stop()``.
    func start(_ refresh: @escaping @Sendable () -> Void) {
        startDetachedThread(stackSize: 256 << 10) { [self] in
            var pending = false
            while !stopped.load(ordering: .relaxed) {
                guard let batch = events.wait(milliseconds: pending ? Self.quiet : 200) else { break }
                if batch.isEmpty {
                    if pending, !stopped.load(ordering: .relaxed) { refresh() }
                    pending = false
                    continue
                }
                // The whole directory replaced: watch the new one.
                // (Or events were lost: the rename may have been among them.)
                if batch.contains(where: { ($0.watch == parentWatch && $0.name == name) || $0.overflowed }) {
                    rewatch()
                    pending = true
                }
                // A plugin file, a library, a lock file or its signature;
                // hidden names are installs in progress.
                if batch.contains(where: { $0.watch != parentWatch && ($0.overflowed || Self.matters($0.name)) }) { pending = true }
            }
        }
    }

    /// Ends the thread within a fraction of a second (a refresh under way finishes first).
    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Whether a change of `name` may change what the host runs.
    static func matters(_ name: String) -> Bool {
        !name.hasPrefix(".") && [".so", ".lock", ".minisig"].contains { name.hasSuffix($0) }
    }
}
