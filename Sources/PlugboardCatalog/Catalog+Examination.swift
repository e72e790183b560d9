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
        changed = record(zip(jobs, outcomes), into: &examined, entries: &entries) || changed
        // Entries of files gone from the candidates' folders go (the
        // candidates were just stat'ed; found in the index without
        // decoding); other folders' only when the file is written anyway: a
        // warm start never pays for them.
        let current = Set(candidates.map(\.path))
        var folders = Set<String>(), lastFolder = ""
        for candidate in candidates {
            // A folder's files come one after another: compared before hashed.
            let folder = OwnershipCheck.parent(of: candidate.path)
            if folder != lastFolder { folders.insert(folder) }
            lastFolder = folder
        }
        changed = dropGoneEntries(&entries, keeping: current, in: folders) || changed
        if changed {
            dropGoneEntries(&entries, keeping: current, in: nil)
            if let problem = cache.save(entries) { services.report(problem) }
        }
        return examined
    }

    /// The scanner's outcomes into the records and the cache entries;
    /// whether an entry changed.
    private func record(
        _ scans: some Sequence<((index: Int, image: CheckedImage), PluginScanner.Outcome)>,
        into examined: inout [Examined], entries: inout CacheEntries
    ) -> Bool {
        var changed = false
        for (job, outcome) in scans {
            let record = examined[job.index].record
            let path = record.path
            let result: CacheEntry.Result
            switch outcome {
            case let .plugin(plugin): result = .plugin(plugin)
            case let .rejected(code, reason) where code == "load-failed":
                // Depends on the machine (a library it needs, memory), not
                // only on the file: reported, not remembered; and what was
                // remembered of the file goes (a later look without
                // --rescan must not show an answer this one contradicted).
                examined[job.index].record.fail(.reported(path: path, code: code, reason: reason))
                if entries[path] != nil {
                    entries[path] = nil
                    changed = true
                }
                continue
            case let .rejected(code, reason): result = .rejected(code: code, reason: reason)
            case var .quarantined(quarantine):
                // Stamped before it is cached: the record says what this process ran.
                quarantine.taint = journal.taint?.codes
                result = .quarantined(quarantine)
            case let .unavailable(detail):
                // Not cached: nothing was learned about the file (and the
                // old answer goes, as above).
                examined[job.index].record.fail(.scannerUnavailable(path: path, detail: detail))
                if entries[path] != nil {
                    entries[path] = nil
                    changed = true
                }
                continue
            }
            let entry = CacheEntry(identity: job.image.identity, hash: ContentHash.text(job.image.hash), result: result, details: record.file)
            entries[path] = entry
            changed = true
            examined[job.index] = apply(entry, to: record, readPath: job.image.readPath, image: job.image)
        }
        return changed
    }

    /// Drops the entries of files that are gone (not among `current`, no
    /// file at the path), those in `folders`, or all when nil; whether any went.
    @discardableResult
    private func dropGoneEntries(_ entries: inout CacheEntries, keeping current: Set<String>, in folders: Set<String>?) -> Bool {
        let paths = folders.map { $0.flatMap { entries.paths(in: $0) } } ?? entries.paths
        var dropped = false
        for path in paths where !current.contains(path) && FileIdentity.of(path: path) == nil {
            entries[path] = nil
            dropped = true
        }
        return dropped
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
