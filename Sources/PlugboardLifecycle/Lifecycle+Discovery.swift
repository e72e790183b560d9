import PlugboardCore

/// Discovery, as the owner takes it: the ``Catalog`` examines and settles
/// files against the table; the lifecycle records what it decided and
/// publishes the newly available plugins.
extension Lifecycle {
    /// Every candidate of `directory` (and its `lib/` interface libraries)
    /// admitted and scanned, or answered by the cache.
    package func discover(_ directory: String, rescan: Bool) throws(PluginDirectory.ScanError) -> [PluginRecord] {
        let candidates = try PluginDirectory.scan(directory)
        guard let records = discover(candidates, libraryFolders: [directory], rescan: rescan) else { return [] }
        catalog.reportUnknownConfiguredPlugins(known: records, in: directory)
        return records
    }

    /// `files` (absolute or relative paths) as discovery would take them,
    /// with the interface libraries of the `lib/` folder beside each.
    package func discover(files: [String], rescan: Bool) -> [PluginRecord] {
        let candidates = PluginDirectory.candidates(at: files)
        return discover(candidates, libraryFolders: Set(candidates.map { OwnershipCheck.parent(of: $0.path) }).sorted(), rescan: rescan) ?? []
    }

    /// The one discovery both take: the `lib/` interface libraries of
    /// `libraryFolders` installed, then `candidates` examined (files read,
    /// scanners run: outside the table's lock), settled against the table
    /// and recorded. nil after shutdown: nothing is discovered then.
    private func discover(_ candidates: [PluginCandidate], libraryFolders: [String], rescan: Bool) -> [PluginRecord]? {
        markUnverifiedDirectories()
        return catalog.discovering.withLock { _ -> [PluginRecord]? in
            if table.withLock(\.closed) { return nil }
            var libraries = libraryFolders.flatMap(catalog.installInterfaceLibraries(from:))
            var examined = catalog.examine(candidates, rescan: rescan)
            // A build folder: the interface libraries beside its plugins are
            // installed, not listed; plugins that could not load without
            // them are examined again (a failed load is not cached).
            let siblings = catalog.siblingInterfaceLibraries(examined)
            if !siblings.isEmpty {
                libraries += catalog.installInterfaceLibraries(siblings)
                examined.removeAll { siblings.contains($0.record.path) }
                let retry = examined.indices.compactMap { index in
                    examined[index].record.code == PluginLoadError.Code.loadFailed.rawValue
                        ? candidates.first { $0.path == examined[index].record.path }.map { (index, $0) } : nil
                }
                if !retry.isEmpty {
                    let first = catalog.lastDiscovery
                    for ((index, _), fresh) in zip(retry, catalog.examine(retry.map(\.1), rescan: false)) { examined[index] = fresh }
                    catalog.facts.withLock { $0.lastDiscovery.add(first) }
                }
            }
            catalog.facts.withLock { $0.lastDiscovery.interfaceLibraries = libraries.filter { $0.error == nil }.map(\.path) }
            // Settled on a copy (nothing is written while it settles), recorded in one change.
            let settlement = catalog.settle(examined, against: table.withLock(\.known))
            table.withLock { table in
                table.record(settlement)
                publishAvailable(settlement.admitted, in: table)
            }
            return settlement.records
        }
    }
}

extension Lifecycle {
    /// Directory checks off: every file admitted from now on is unverified.
    private func markUnverifiedDirectories() {
        guard !configuration.checksOwnership else { return }
        taint.mark(HostTaint.directoryChecksOff,
            "plugin files are admitted without the ownership and permission checks of their folders (\(DirectoryTrust.environmentOptOut), --allow-unsafe-directories or Configuration.trust)")
    }
}
