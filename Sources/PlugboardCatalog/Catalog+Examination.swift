import Plugboard
import PlugboardCore
import PlugboardAdmission

extension Catalog {
    /// A record of one candidate, and what is needed to activate it if it is compatible.
    package struct Examined {
        package var record: PluginRecord
        var available: AvailablePlugin?
    }

    /// Takes candidates to records without running plugin code in the host:
    /// each is admitted (``Admission``: trust, one read, static checks, lock
    /// entry, private copy) and its copy scanned in a child process. The
    /// cache may stand in for the read and the scan of a file it knows (its
    /// identity unchanged), never for a check: such a plugin is admitted in
    /// full when it activates. Under a lock file every file is admitted now,
    /// and a remembered scan is used only for the very bytes it was made of.
    package func examine(_ candidates: [PluginCandidate], rescan: Bool) -> [Examined] {
        var (entries, warning) = cache.load()
        if let warning { services.report(warning) }
        var changed = applyJournal(to: &entries) || warning != nil
        let shared = quarantines.load()
        changed = applySharedQuarantines(shared, to: &entries, candidates: candidates, rescan: rescan) || changed

        var statistics = DiscoveryStatistics()
        var examined: [Examined] = []
        examined.reserveCapacity(candidates.count)
        var ownership = OwnershipCheck()
        if !settings.trust.enforced && !candidates.isEmpty { reportTrustOff() }
        var jobs: [(index: Int, image: CheckedImage)] = []
        for candidate in candidates {
            var record = PluginRecord(path: candidate.path, resolvedPath: candidate.resolvedPath)
            var known = rescan ? nil : entries[candidate.path].flatMap { entry in
                entry.identity == (candidate.identity ?? candidate.resolvedPath.flatMap(FileIdentity.of(path:))) ? entry : nil
            }
            // A host's quarantine the shared record marks lifted (a rescan
            // by another host of the state directory).
            if case let .quarantined(quarantine)? = known?.result, quarantine.ending.isDecidedByAHost,
               let mark = shared[candidate.path], mark.quarantine == nil, mark.identity == known?.identity {
                known = nil
                entries[candidate.path] = nil
                changed = true
            }
            if let known, admission.lock == nil {
                // Warm: trust and listing only; activation admits the bytes.
                switch admission.trusted(candidate, ownership: &ownership) {
                case let .failure(problem):
                    record.fail(problem)
                    examined.append(Examined(record: record))
                case let .success(readPath):
                    statistics.cacheHits += 1
                    examined.append(apply(known, to: record, readPath: readPath, image: nil))
                }
                continue
            }
            let image: CheckedImage
            switch admission.admit(candidate, ownership: &ownership) {
            case let .failure(refusal):
                record.fail(refusal.error)
                if let read = refusal.read {
                    statistics.filesRead += 1
                    record.file = read.details ?? record.file
                    if refusal.isAboutContents {
                        changed = true
                        entries[candidate.path] = CacheEntry(
                            identity: read.identity, hash: ContentHash.text(read.hash),
                            result: .rejected(code: refusal.error.code.rawValue, reason: refusal.error.reason), details: read.details)
                    }
                }
                examined.append(Examined(record: record))
                continue
            case let .success(checked): image = checked
            }
            statistics.filesRead += 1
            record.file = image.details
            record.sha256 = image.sha256
            // Locked and known: the remembered scan stands for these bytes only.
            if let known, known.hash == ContentHash.text(image.hash) {
                statistics.cacheHits += 1
                examined.append(apply(known, to: record, readPath: image.readPath, image: image))
                continue
            }
            jobs.append((examined.count, image))
            examined.append(Examined(record: record))
        }

        let scanner = PluginScanner(settings: settings.scanner)
        let (outcomes, processes, _) = scanner.scan(jobs.map { PluginScanner.Job(file: $0.image.copy) })
        statistics.filesScanned = jobs.count
        statistics.scannerProcesses = processes
        facts.withLock { $0.lastDiscovery = statistics }
        for (job, outcome) in zip(jobs, outcomes) {
            let record = examined[job.index].record
            let path = record.path
            let result: CacheEntry.Result
            switch outcome {
            case let .plugin(plugin): result = .plugin(plugin)
            case let .rejected(code, reason) where code == "load-failed":
                // Depends on the machine (a library it needs, memory), not
                // only on the file: reported, not remembered.
                examined[job.index].record.fail(.reported(path: path, code: code, reason: reason))
                continue
            case let .rejected(code, reason): result = .rejected(code: code, reason: reason)
            case var .quarantined(quarantine):
                // Stamped before it is cached: the record says what this process ran.
                quarantine.taint = journal.taint?.codes
                result = .quarantined(quarantine)
            case let .unavailable(detail):
                // Not cached: nothing was learned about the file.
                examined[job.index].record.fail(.scannerUnavailable(path: path, detail: detail))
                continue
            }
            let entry = CacheEntry(identity: job.image.identity, hash: ContentHash.text(job.image.hash), result: result, details: record.file)
            entries[path] = entry
            changed = true
            examined[job.index] = apply(entry, to: record, readPath: job.image.readPath, image: job.image)
        }

        // Drop entries of files that are gone from the candidates' folders
        // (found in the index without decoding; the candidates were just
        // stat'ed). Other folders' entries are checked only when the file is
        // written anyway: a warm start never pays for them.
        let current = Set(candidates.map(\.path))
        var folders = Set<String>(), lastFolder = ""
        for candidate in candidates {
            // A folder's files come one after another: compared before hashed.
            let folder = OwnershipCheck.parent(of: candidate.path)
            if folder != lastFolder { folders.insert(folder) }
            lastFolder = folder
        }
        for path in folders.flatMap({ entries.paths(in: $0) }) where !current.contains(path) && FileIdentity.of(path: path) == nil {
            entries[path] = nil
            changed = true
        }
        if changed {
            for path in entries.paths where !current.contains(path) && FileIdentity.of(path: path) == nil { entries[path] = nil }
            if let problem = cache.save(entries) { services.report(problem) }
        }
        return examined
    }

    /// What a cache entry (fresh or remembered) means for a record; `image`
    /// is the file admitted now, if it was (its scan must agree with it).
    private func apply(_ entry: CacheEntry, to record: PluginRecord, readPath: String, image: CheckedImage?) -> Examined {
        var record = record
        record.file = entry.details ?? record.file
        switch entry.result {
        case let .plugin(plugin):
            record.describe(plugin)
            var loadable: LoadableImage?
            if let image {
                // Fresh from a scanner, or remembered for these very bytes (hashes compared above).
                switch admission.join(image, with: plugin, from: .thisImage) {
                case let .success(joined): loadable = joined
                case let .failure(problem):
                    record.fail(problem)
                    return Examined(record: record)
                }
            }
            record.status = .available
            return Examined(record: record, available: AvailablePlugin(
                plugin: plugin, path: record.path, resolvedPath: readPath, identity: entry.identity, hash: entry.hash, image: loadable))
        case let .rejected(code, reason):
            record.fail(.reported(path: record.path, code: code, reason: reason))
        case let .quarantined(quarantine):
            if let plugin = entry.plugin { record.describe(plugin) }
            record.fail(.quarantined(path: record.path, quarantine: quarantine))
        }
        return Examined(record: record)
    }

    /// Quarantines, in the cache, the plugins a dead host was running
    /// (read once per host; the notes are removed as they are read).
    /// Whether it changed anything.
    private func applyJournal(to entries: inout CacheEntries) -> Bool {
        let first = facts.withLock { facts in
            defer { facts.recovered = true }
            return !facts.recovered
        }
        guard first else { return false }
        let recoveredNotes = journal.recoverDeadNotes()
        var changed = false
        var shared: [SharedQuarantines.Entry] = []
        for recovered in recoveredNotes {
            if !recovered.suspects.isEmpty {
                reportUnattributed(recovered)
                continue
            }
            let note = recovered.note
            guard let identity = note.identity ?? FileIdentity.of(path: note.path) else { continue }
            var quarantine = Quarantine(
                phase: note.phase, ending: .hostDied, signal: recovered.signal.map(Signals.name), exitStatus: nil,
                milliseconds: nil, stderrTail: [], date: note.date, evidence: recovered.evidence)
            quarantine.taint = note.taint
            if let interruption = recovered.interruption {
                let starts = (note.interruptedStarts ?? 0) + 1
                guard interruption.pastThreshold || starts >= Self.interruptedStartsForHang else {
                    // Once is a person stopping a slow start; the next start
                    // stopped in the same place is a hang (carried in its note).
                    facts.withLock { $0.interruptedStarts[note.path] = (identity, starts) }
                    services.report(HostDiagnostic(.warning, code: "host-interrupted",
                        message: "\(note.path): the host was stopped by \(Signals.name(interruption.signal)) during this plugin's \(note.phase.label) after \(Quarantine.format(interruption.milliseconds)); if the next start is stopped there too, it is quarantined as a hang",
                        plugin: note.pluginID))
                    continue
                }
                quarantine.ending = .hostInterrupted
                quarantine.signal = Signals.name(interruption.signal)
                quarantine.milliseconds = interruption.milliseconds
                quarantine.evidence = nil
                quarantine.interruptedStarts = interruption.pastThreshold ? nil : starts
            }
            let entry = CacheEntry.quarantining(entries[note.path], identity: identity, quarantine)
            entries[note.path] = entry
            shared.append(.init(path: note.path, identity: identity, quarantine: quarantine, plugin: entry.plugin))
            services.report(HostDiagnostic(.error, code: .init(quarantine.code.rawValue),
                message: "\(note.path): \(quarantine.reason)", plugin: note.pluginID))
            changed = true
        }
        // For every host of this state directory, not only this kind's cache.
        if !shared.isEmpty, let problem = quarantines.update({ entries in for entry in shared { entries[entry.path] = entry } }) {
            services.report(problem)
        }
        return changed
    }

    /// Quarantines other hosts of the state directory decided (see
    /// ``SharedQuarantines``) go into this host's cache entries for the
    /// candidates whose file is unchanged; a rescan lifts them for all.
    /// Whether it changed anything.
    private func applySharedQuarantines(
        _ shared: [String: SharedQuarantines.Entry], to entries: inout CacheEntries, candidates: [PluginCandidate], rescan: Bool
    ) -> Bool {
        guard !shared.isEmpty else { return false }
        var changed = false, lifted: [SharedQuarantines.Entry] = []
        for candidate in candidates {
            guard let entry = shared[candidate.path], let quarantine = entry.quarantine else { continue }
            guard entry.identity == (candidate.identity ?? candidate.resolvedPath.flatMap(FileIdentity.of(path:))) else { continue }
            if rescan {
                lifted.append(entry)
                continue
            }
            let known = entries[candidate.path]
            if known?.identity == entry.identity, case .quarantined? = known?.result { continue }
            var quarantined = CacheEntry.quarantining(known, identity: entry.identity, quarantine)
            if quarantined.plugin == nil { quarantined.plugin = entry.plugin }
            entries[candidate.path] = quarantined
            changed = true
        }
        if !lifted.isEmpty, let problem = quarantines.update({ entries in
            for entry in lifted { entries[entry.path] = .init(path: entry.path, identity: entry.identity, quarantine: nil, plugin: nil) }
        }) {
            services.report(problem)
        }
        return changed
    }

    /// A dead host was starting several plugins side by side: none is
    /// quarantined on a guess; this host starts plugins one at a time.
    private func reportUnattributed(_ recovered: CrashJournal.Recovered) {
        facts.withLock { $0.startsOneAtATime = true }
        let how = recovered.signal.map { "crashed with \(Signals.name($0))" } ?? "ended (exit status unknown)"
        let plugins = recovered.suspects.map { "\($0.pluginID) (\($0.path), \($0.phase.label))" }.joined(separator: ", ")
        services.report(HostDiagnostic(.warning, code: "host-crash-unattributed",
            message: "the last host process \(how) while plugins started side by side: \(plugins); no stack frame named one, so none is quarantined; this host starts plugins one at a time, so a crash again names its plugin"))
    }

    /// How many starts in a row stopped (SIGINT/SIGTERM) during one
    /// plugin's init or activate, each before the hang threshold, make it
    /// quarantined as `host-hung`. One past the threshold does at once.
    static let interruptedStartsForHang = 2

    /// What the host already has when a discovery settles: the lifecycle's
    /// table, as far as discovery needs it.
    package struct Known {
        /// One record per file, in discovery order.
        package let records: [PluginRecord]
        /// Plugins taken for a start or running, by id, with their file.
        package let claimed: [String: String]
        /// Plugins available, by id.
        package let available: [String: AvailablePlugin]

        package init(records: [PluginRecord], claimed: [String: String], available: [String: AvailablePlugin]) {
            self.records = records
            self.claimed = claimed
            self.available = available
        }
    }

    /// What settling a discovery decided, for the lifecycle to record.
    package struct Settlement {
        /// One record per candidate, in the candidates' order (a file the
        /// host already has keeps its current record).
        package let records: [PluginRecord]
        /// The records of files examined now (not already held).
        package let fresh: [PluginRecord]
        /// The plugins that become available.
        package let admitted: [AvailablePlugin]
    }

    /// Settles examined candidates against what the host already has
    /// (`table`): interface versions, duplicate ids, disabled plugins and
    /// dependencies; the rest become `available`. Changes nothing: the
    /// lifecycle records the result.
    package func settle(_ examined: consuming [Examined], against table: Known) -> Settlement {
        // A file this host already has (available or active) stays as it is:
        // discovering twice must not make a plugin its own duplicate.
        let known = Set(table.claimed.values).union(table.available.values.map(\.path))
        // Indexed once: with thousands of files, a search per file was most of a warm start.
        let latest = Dictionary(table.records.map { ($0.path, $0) }, uniquingKeysWith: { _, last in last })
        var reused: [Int: PluginRecord] = [:]
        for (index, item) in examined.enumerated() where item.available != nil && known.contains(item.record.path) {
            reused[index] = latest[item.record.path]
        }
        // Records are copied as few times as can be: each copy of each one is
        // paid per installed plugin on every start.
        for index in reused.keys { examined[index].available = nil }
        for index in examined.indices where examined[index].available != nil {
            if !checkInterfaces(examined[index].available!.plugin, &examined[index].record) {
                examined[index].available = nil
            }
        }
        settleDuplicates(&examined, against: table)
        let disabled = settings.disabled
        for index in examined.indices where !disabled.isEmpty {
            guard let available = examined[index].available, let source = disabled[available.plugin.id] else { continue }
            examined[index].record.fail(.disabled(path: examined[index].record.path, id: available.plugin.id, source: source))
            examined[index].available = nil
        }
        settleDependencies(&examined, against: table)
        let admitted = examined.compactMap(\.available)
        var fresh: [PluginRecord] = []
        fresh.reserveCapacity(examined.count)
        for index in examined.indices where reused[index] == nil { fresh.append(examined[index].record) }
        let records = reused.isEmpty ? fresh : examined.indices.map { reused[$0] ?? examined[$0].record }
        return Settlement(records: records, fresh: fresh, admitted: admitted)
    }

    /// Rejects a plugin that provides a declared interface at an incompatible
    /// version; warns about interfaces the host does not declare.
    package func checkInterfaces(_ plugin: ScannedPlugin, _ record: inout PluginRecord) -> Bool {
        for interface in plugin.interfaces {
            guard let point = registry.declaredPoint(for: interface.id) else {
                record.warnings.append(PluginRecord.undeclaredWarning(interface))
                record.undeclared.append(interface.id)
                continue
            }
            if !InterfaceCompatibility.accepts(host: point.interface.version, provided: interface.version) {
                record.fail(.interfaceVersion(
                    path: record.path, interface: interface.id, provided: interface.version, host: point.interface.version))
                return false
            }
        }
        return true
    }

    /// One plugin per id: the highest version wins, ties go to the first file
    /// by name; a plugin already active or available in this host always wins.
    private func settleDuplicates(_ examined: inout [Examined], against table: Known) {
        let known = Dictionary(table.claimed.map { ($0.key, $0.value) } + table.available.values.map { ($0.plugin.id, $0.path) },
                               uniquingKeysWith: { first, _ in first })
        var winner: [String: Int] = [:]
        for index in examined.indices {
            guard let plugin = examined[index].available?.plugin else { continue }
            let id = plugin.id
            if !known.isEmpty, let kept = known[id] {
                examined[index].record.fail(.duplicateID(path: examined[index].record.path, id: id, kept: kept))
                examined[index].available = nil
                continue
            }
            guard let current = winner[id] else { winner[id] = index; continue }
            let loser: Int
            if plugin.semanticVersion > examined[current].available!.plugin.semanticVersion {
                winner[id] = index
                loser = current
            } else {
                loser = index
            }
            let kept = examined[winner[id]!].record.path
            examined[loser].record.fail(.duplicateID(path: examined[loser].record.path, id: id, kept: kept))
            examined[loser].available = nil
        }
    }
}

extension ScannedPlugin {
    package var semanticVersion: SemanticVersion { SemanticVersion(version) ?? SemanticVersion(0, 0, 0) }

    var interfaces: [Interface] {
        provides.map { Interface(id: $0.interface, version: SemanticVersion($0.version) ?? SemanticVersion(0, 0, 0)) }
    }
}

extension PluginRecord {
    /// Fills in what the scan learned.
    package mutating func describe(_ plugin: ScannedPlugin) {
        id = plugin.id
        version = plugin.semanticVersion
        provides = plugin.interfaces
        services = plugin.services
        sdkABI = ABIVersion(plugin.sdkABI)
        sdkVersion = plugin.sdkVersion
        toolchain = plugin.toolchain
        activation = plugin.activation
        requires = plugin.dependencies
        needs = plugin.needs
    }
}

extension Catalog {
    /// Says, loudly, that anyone who can write to the plugins directory can run code here.
    func reportTrustOff() {
        services.report(HostDiagnostic(.warning, code: "directory-checks-off",
            message: "directory checks are off (--allow-unsafe-directories, \(DirectoryTrust.environmentOptOut) or DirectoryTrust.unenforced): "
                + "plugin files are loaded whoever owns them and whoever can write to their folders; "
                + "any user who can write there can run code in this host. Use this only for development"))
    }
}
