extension Lifecycle {
    /// See ``PluginHost/snapshot()``.
    func snapshot() -> [PluginSnapshot] {
        withIsolation(records).map { record in
            let live = record.id.flatMap { record.status == .active ? liveFacts(of: $0) : nil }
            return PluginSnapshot(
                id: record.id, file: record.path, status: record.status.rawValue, version: record.version?.description,
                code: record.code, generation: live?.generation, contentHash: live?.contentHash, sha256: record.sha256,
                activatedAt: live?.activatedAt, isolation: record.isolation, calls: live?.calls, failures: live?.failures,
                crashes: live?.crashes, quarantine: record.quarantine)
        }
    }
}
