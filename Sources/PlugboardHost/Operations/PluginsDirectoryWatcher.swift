import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Refreshes a host when a plugin file is installed, replaced or removed in
/// its plugins directory (and, when asked, its `lib/`): inotify, with the
/// events of one install (a rename, or a copy and its close) gathered until
/// they stop for ``quiet``. ``PluginHost/Configuration/Watching/pluginsDirectory``.
final class PluginsDirectoryWatcher: Sendable {
    /// How long the directory must stay still before a refresh.
    static let quiet: Int32 = 100
    private let events: InotifyEvents
    private let stopped = Atomic<Bool>(false)

    /// Nil when inotify is unavailable or `directory` cannot be watched.
    init?(directory: String, libraries: Bool) {
        guard let events = InotifyEvents() else { return nil }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
        guard events.add(directory, mask: mask) != nil else { return nil }
        if libraries { _ = events.add(directory + "/" + PluginDirectory.interfaceFolder, mask: mask) }
        self.events = events
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
                // A plugin file, a library, a lock file or its signature;
                // hidden names are installs in progress.
                if batch.contains(where: { $0.overflowed || Self.matters($0.name) }) { pending = true }
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
