@_spi(PlugboardHost) import Plugboard

extension PluginHost {
    /// Activates the available plugins among `pluginIDs`, in file-name order,
    /// and publishes their providers in one registry update. Each load,
    /// init and activate runs with a crash-journal note.
    func activateLocked(_ pluginIDs: Set<String>) {
        let pending = state.withLock { state in
            pluginIDs.compactMap { state.available.removeValue(forKey: $0) }.sorted { $0.path < $1.path }
        }
        guard !pending.isEmpty else { return }
        services.triggers.remove(Set(pending.map(\.plugin.id)))
        var started: [LivePlugin] = []
        ExtensionRegistry.$isActivating.withValue(true) {
            for plugin in pending {
                let result = start(plugin)
                state.withLock { state in
                    guard let index = state.records.lastIndex(where: { $0.path == plugin.path && $0.status == .available }) else { return }
                    switch result {
                    case .success:
                        state.records[index].status = .active
                        state.records[index].generation = 1
                    case let .failure(error):
                        state.records[index].fail(error)
                    }
                }
                switch result {
                case var .success(live):
                    live.identity = plugin.identity
                    started.append(live)
                case .failure: services.retire(plugin.plugin.id)
                }
            }
        }
        state.withLock { $0.live.append(contentsOf: started) }
        registry.replaceProviders(of: Set(started.map(\.id)), with: started.flatMap(\.providers), pending: pendingInterfaces())
    }

    /// Drops what the cache says about `path`, so the next start examines it.
    private func forgetCacheEntry(_ path: String) {
        var (entries, _) = cache.load()
        guard entries.removeValue(forKey: path) != nil else { return }
        if let problem = cache.save(entries) { services.report(problem) }
    }

    /// Loads the checked bytes of one available plugin, creates and activates it.
    private func start(_ plugin: AvailablePlugin) -> Result<LivePlugin, PluginLoadError> {
        let path = plugin.path
        let copy: String
        if let examined = plugin.copy {
            copy = examined
        } else {
            // Known from the cache: the bytes read now must be the ones scanned.
            switch PluginFile.readBytes(plugin.resolvedPath, reportedAs: path) {
            case let .failure(error): return .failure(error)
            case let .success(file):
                guard file.identity == plugin.identity, ContentHash.text(file.hash) == plugin.hash else {
                    forgetCacheEntry(path)
                    return .failure(.fileChanged(path: path, detail: "it is not the file that was scanned: it changed since"))
                }
                // The very bytes about to be copied and loaded.
                if let problem = lockProblem(bytes: file.bytes, path: path) { return .failure(problem) }
                do {
                    copy = try copies.write(file.bytes, label: Self.fileName(path))
                } catch {
                    return .failure(.unreadable(path: path, reason: "cannot copy it for loading: \(error)"))
                }
            }
        }
        let date = Quarantine.now()
        let note = { (phase: Quarantine.Phase) in
            CrashJournal.Note(pluginID: plugin.plugin.id, path: path, identity: plugin.identity, phase: phase, date: date)
        }
        let loaded = journal.record(note(.`init`)) { PluginLoader.load(copy, reportedAs: path, environment: environment) }
        let image: LoadedImage
        switch loaded {
        case let .success(loaded): image = loaded
        case let .failure(error): return .failure(error)
        }
        guard image.descriptor.id == plugin.plugin.id else {
            return .failure(.fileChanged(path: path, detail: "it now says plugin \(image.descriptor.id), it was \(plugin.plugin.id) when scanned"))
        }
        let defaults = journal.record(note(.`init`)) { image.factory.defaultConfiguration }
        return Activation.start(
            image, path: path, generation: 1,
            context: services.context(for: image.descriptor, defaults: defaults),
            registry: registry, journal: journal, note: note)
    }
}
