import PlugboardCore
import PlugboardIsolation
import PlugboardAdmission
import PlugboardCatalog

/// Every plugin file the host knows and where each plugin's life stands:
/// the one place a plugin's state lives. The ``Lifecycle`` owns it and is
/// the only part that changes it (under its lock); everything else reads
/// copies, or views the lifecycle publishes from it (the registry's
/// snapshots, the pending triggers).
///
/// A plugin's state is its record's ``PluginStatus``, with these facts beside it:
/// - `available`: admitted and compatible, in ``available`` until taken for a start;
/// - starting: taken (in ``claimed``, out of ``available``) with its line (in ``lines``), its record still `available`;
/// - `active`: in ``live``, its record `active` with its generation;
/// - stopped for good (`failed`, `quarantined`): out of ``live`` and ``claimed``.
/// docs/ARCHITECTURE.md has the table of every state and transition.
struct PluginTable: Sendable {
    /// One record per candidate file, in the order discovery found them.
    var records: [PluginRecord] = []
    /// Compatible, admitted, not started yet; by plugin id.
    var available: [String: AvailablePlugin] = [:]
    /// Plugins taken for a start (starting or active), by id, with their
    /// file: they win over any new file with their id.
    var claimed: [String: String] = [:]
    /// Running plugins, in activation order.
    var live: [LivePlugin] = []
    /// The last generation of each isolated plugin quarantined for its
    /// crashes: its counters stay in the snapshot.
    var quarantinedIsolated: [String: IsolatedPlugin] = [:]
    /// The host shut down: nothing is discovered or started any more.
    var closed = false
    /// The host is shutting down: no start begins, those under way finish.
    var closing = false
    /// The lines held now (``PluginLine``): plugins being started, reloaded
    /// or stopped in a cascade, by id.
    var lines: [String: PluginLine] = [:]

    // MARK: - Reading

    /// Ids of the available plugins that declared `trigger`, or all of them.
    func availableIDs(trigger: PluginTrigger? = nil) -> Set<String> {
        Set(available.values.filter { trigger == nil || $0.triggers.contains(trigger!) }.map(\.plugin.id))
    }

    /// Ids of the available plugins providing `interfaceID`.
    func availableIDs(providing interfaceID: String) -> Set<String> {
        Set(available.values.filter { $0.plugin.provides.contains { $0.interface == interfaceID } }.map(\.plugin.id))
    }

    /// The interfaces available plugins provide: pending in the registry.
    var pendingInterfaces: Set<String> {
        var interfaces = Set<String>(), last = ""
        for plugin in available.values {
            // Most plugins provide the same few interfaces: a repeat is compared, not hashed.
            for provided in plugin.plugin.provides where provided.interface != last {
                interfaces.insert(provided.interface)
                last = provided.interface
            }
        }
        return interfaces
    }

    /// The latest record of each of `records`' files.
    func current(_ records: [PluginRecord]) -> [PluginRecord] {
        let latest = Dictionary(self.records.map { ($0.path, $0) }, uniquingKeysWith: { _, last in last })
        return records.map { latest[$0.path] ?? $0 }
    }

    func livePlugin(_ id: String) -> LivePlugin? { live.first { $0.id == id } }

    /// What a discovery settles against.
    var known: Catalog.Known { Catalog.Known(records: records, claimed: claimed, available: available) }

    // MARK: - Transitions

    /// Discovery settled new files: their records go in (a file examined
    /// again replaces its record), the admitted ones become available.
    mutating func record(_ settled: Catalog.Settlement) {
        // A file examined again (it was refused before) has one record,
        // the latest, where its first old one was.
        var first: [String: Int] = [:]
        first.reserveCapacity(records.count + settled.fresh.count)
        available.reserveCapacity(available.count + settled.admitted.count)
        var stale = Set<Int>()
        for (index, old) in records.enumerated() {
            if first[old.path] == nil { first[old.path] = index } else { stale.insert(index) }
        }
        for record in settled.fresh {
            if let index = first[record.path] {
                records[index] = record
            } else {
                first[record.path] = records.count
                records.append(record)
            }
        }
        // Older duplicates of a path examined again go.
        let freshPaths = stale.isEmpty ? [] : Set(settled.fresh.map(\.path))
        let dropped = stale.filter { freshPaths.contains(records[$0].path) }
        if !dropped.isEmpty { records = records.enumerated().filter { !dropped.contains($0.offset) }.map(\.element) }
        for plugin in settled.admitted { available[plugin.plugin.id] = plugin }
    }

    /// available → starting: takes the available plugins among `pluginIDs`,
    /// in file-name order, and claims their ids.
    mutating func take(_ pluginIDs: Set<String>) -> [AvailablePlugin] {
        let taken = pluginIDs.compactMap { available.removeValue(forKey: $0) }.sorted { $0.path < $1.path }
        for plugin in taken { claimed[plugin.plugin.id] = plugin.path }
        return taken
    }

    /// starting → active (generation 1, in ``live``) or failed (its id is free again).
    mutating func finishStart(of plugin: AvailablePlugin, _ result: Result<LivePlugin, PluginLoadError>) {
        switch result {
        case let .success(started): live.append(started)
        case .failure: claimed[plugin.plugin.id] = nil
        }
        guard let index = records.lastIndex(where: { $0.path == plugin.path && $0.status == .available }) else { return }
        switch result {
        case let .success(started):
            records[index].status = .active
            records[index].generation = started.generation
        case let .failure(error):
            records[index].fail(error)
        }
    }

    /// A reload replaced plugin `id`'s generation running from `oldPath`
    /// with `live`, described by `record`: its live entry, its record and its
    /// claim. Also when the old generation was quarantined during the reload
    /// (its record failed, its claim dropped): the new one runs, and is the
    /// host's to stop.
    /// True when a file with the same id, admitted by a discovery while the
    /// claim was dropped, was refused here (`duplicate-id`).
    mutating func replaceGeneration(of id: String, from oldPath: String, with live: LivePlugin, record: PluginRecord) -> Bool {
        if let index = self.live.firstIndex(where: { $0.id == id }) { self.live[index] = live } else { self.live.append(live) }
        let index = records.lastIndex { $0.id == id && $0.status == .active } ?? records.lastIndex { $0.path == oldPath }
        if let index { records[index] = record } else { records.append(record) }
        claimed[id] = record.path
        guard let rival = available[id], rival.path != record.path else { return false }
        available[id] = nil
        if let index = records.lastIndex(where: { $0.path == rival.path && $0.status == .available }) {
            records[index].fail(.duplicateID(path: rival.path, id: id, kept: record.path))
        }
        return true
    }

    /// A dependent restarted by a reload cascade runs as `generation`.
    mutating func setGeneration(of id: String, _ generation: Int) {
        guard let index = records.lastIndex(where: { $0.id == id && $0.status == .active }) else { return }
        records[index].generation = generation
    }

    /// active → failed or quarantined: stopped for good while the host runs;
    /// its record says why, and its id is free again.
    mutating func stopActive(_ id: String, _ error: PluginLoadError) {
        claimed[id] = nil
        guard let index = records.lastIndex(where: { $0.id == id && $0.status == .active }) else { return }
        records[index].fail(error)
    }

    /// Forgets the records of files whose plugins were retired (the files
    /// are gone); their ids are free again.
    mutating func forgetRecords(of paths: Set<String>) {
        records.removeAll { paths.contains($0.path) }
        for (id, path) in claimed where paths.contains(path) { claimed[id] = nil }
    }

    /// For a refresh: forgets the available plugins whose file changed
    /// (`changed`: the next discovery examines it again), and the records of
    /// refused files that are gone (`gone`, by path); both judged by the
    /// caller outside the lock. Their ids.
    mutating func forget(changed: Set<String>, gonePaths: Set<String>) -> [String] {
        var forgotten: [String] = []
        for id in changed {
            guard let plugin = available.removeValue(forKey: id) else { continue }
            records.removeAll { $0.path == plugin.path }
            forgotten.append(id)
        }
        records.removeAll { record in record.status != .active && record.status != .available && gonePaths.contains(record.path) }
        return forgotten.sorted()
    }

    /// The host shut down: nothing available, claimed or live; nothing more is discovered.
    mutating func close() -> [LivePlugin] {
        defer {
            available.removeAll()
            claimed.removeAll()
            live.removeAll()
            closed = true
        }
        return live
    }
}
