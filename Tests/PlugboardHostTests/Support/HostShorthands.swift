@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle

/// Shorthands the tests use, written only with the host's public verbs.
extension PluginHost {
    /// Discovers the plugins directory and activates everything available;
    /// the records as they ended.
    @discardableResult
    func loadAll(rescan: Bool = false) throws(PluginDirectory.ScanError) -> [PluginRecord] {
        let records = try discover(rescan: rescan)
        activateAll()
        return current(records)
    }

    /// Discovers `files` and activates the compatible ones; the records as they ended.
    @discardableResult
    func load(files: [String]) -> [PluginRecord] {
        let records = discover(files: files)
        activate(pluginIDs: Set(records.filter { $0.status == .available }.compactMap(\.id)))
        return current(records)
    }

    /// ``discover(files:rescan:)`` under the name the older tests use.
    @discardableResult
    func examine(files: [String], rescan: Bool = false) -> [PluginRecord] {
        discover(files: files, rescan: rescan)
    }
}
