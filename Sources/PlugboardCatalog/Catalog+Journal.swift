import Plugboard
import PlugboardCore
import PlugboardAdmission

/// What the catalog learns from outside the files at each discovery: the
/// notes a dead host's journal left, and the quarantines other hosts of the
/// state directory decided.
extension Catalog {
    /// Quarantines, in the cache, the plugins a dead host was running
    /// (read once per host; the notes are removed as they are read).
    /// Whether it changed anything.
    func applyJournal(to entries: inout CacheEntries) -> Bool {
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
    func applySharedQuarantines(
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
}
