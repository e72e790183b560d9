import Synchronization
import PlugboardCore
import PlugboardLifecycle

/// A host's live refresh: the plugins-directory watcher, once started, and
/// the diagnostic each refresh it asks for is reported as.
final class DirectoryWatching: Sendable {
    private let watcher = Mutex<PluginsDirectoryWatcher?>(nil)

    init() {}

    /// Starts watching `directory` (and its `lib/` with `libraries`) unless
    /// already started; each settled change calls `refresh`, reported as
    /// `plugins-refreshed`. A directory that cannot be watched is reported
    /// (`plugins-watch-unavailable`) and refresh() stays the way to pick up changes.
    func start(
        directory: String, libraries: Bool, report: @escaping @Sendable (HostDiagnostic) -> Void,
        refresh: @escaping @Sendable () throws(PluginDirectory.ScanError) -> RefreshOutcome?
    ) {
        watcher.withLock { current in
            guard current == nil else { return }
            guard let started = PluginsDirectoryWatcher(directory: directory, libraries: libraries) else {
                report(HostDiagnostic(.warning, code: "plugins-watch-unavailable",
                    message: "\(directory) cannot be watched (inotify is unavailable or its limits are reached); call refresh() to pick up changes"))
                return
            }
            started.start {
                do {
                    guard let outcome = try refresh() else { return }
                    report(HostDiagnostic(.info, code: "plugins-refreshed", message: outcome.summary))
                } catch {
                    report(HostDiagnostic(.warning, code: "plugins-directory-unreadable", message: "\(error)"))
                }
            }
            current = started
        }
    }

    func stop() {
        watcher.withLock { $0?.stop() }
    }
}
