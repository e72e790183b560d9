import Synchronization

extension Lifecycle {
    /// See ``PluginHost/snapshot()``.
    package func snapshot() -> [PluginSnapshot] {
        withIsolation(records).map { record in
            let live = record.id.flatMap { record.status == .active ? liveFacts(of: $0) : nil }
            // A quarantined isolated plugin keeps its last generation's counters.
            let quarantined = record.status == .quarantined ? record.id.flatMap { id in table.withLock { $0.quarantinedIsolated[id] } } : nil
            let isolated = live?.isolated ?? quarantined, calls = isolated?.counts
            return PluginSnapshot(
                id: record.id, file: record.path, status: record.status.rawValue, version: record.version?.description,
                code: record.code, generation: live?.generation ?? quarantined?.generation, contentHash: live?.contentHash, sha256: record.sha256,
                activatedAt: live?.activatedAt, isolation: record.isolation ?? quarantined?.status,
                calls: calls?.calls.load(ordering: .relaxed), failures: calls?.failures.load(ordering: .relaxed),
                inFlight: calls?.inFlight.load(ordering: .relaxed), queued: calls?.queued.load(ordering: .relaxed),
                shed: calls?.shed.load(ordering: .relaxed),
                eventsDropped: isolated.map { $0.eventQueues.published.dropped.load(ordering: .relaxed) + $0.eventQueues.delivered.dropped.load(ordering: .relaxed) },
                // Quarantined, the last crash started no child: the quarantine counted it.
                crashes: quarantined != nil ? record.quarantine?.crashes : isolated?.status.restarts, quarantine: record.quarantine)
        }
    }
}
