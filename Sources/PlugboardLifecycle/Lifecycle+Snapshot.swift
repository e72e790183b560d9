import Synchronization

extension Lifecycle {
    /// See ``PluginHost/snapshot()``.
    package func snapshot() -> [PluginSnapshot] {
        withIsolation(records).map { record in
            let live = record.id.flatMap { record.status == .active ? liveFacts(of: $0) : nil }
            let isolated = live?.isolated, calls = isolated?.counts
            return PluginSnapshot(
                id: record.id, file: record.path, status: record.status.rawValue, version: record.version?.description,
                code: record.code, generation: live?.generation, contentHash: live?.contentHash, sha256: record.sha256,
                activatedAt: live?.activatedAt, isolation: record.isolation,
                calls: calls?.calls.load(ordering: .relaxed), failures: calls?.failures.load(ordering: .relaxed),
                inFlight: calls?.inFlight.load(ordering: .relaxed), queued: calls?.queued.load(ordering: .relaxed),
                shed: calls?.shed.load(ordering: .relaxed),
                eventsDropped: isolated.map { $0.eventQueues.published.dropped.load(ordering: .relaxed) + $0.eventQueues.delivered.dropped.load(ordering: .relaxed) },
                crashes: isolated?.status.restarts, quarantine: record.quarantine)
        }
    }
}
