@_spi(PlugboardHost) import Plugboard
/// What the registry cache remembers about one plugin file.
struct CacheEntry: Sendable, Codable, Equatable {
    /// The outcome of examining the file.
    enum Result: Sendable, Equatable {
        /// Compatible: its descriptor, read by the scanner.
        case plugin(ScannedPlugin)
        /// Refused by a static check or by the scanner.
        case rejected(code: String, reason: String)
        case quarantined(Quarantine)
    }

    /// The file's identity when it was examined: a different one means the
    /// file changed and the entry no longer applies.
    let identity: FileIdentity
    /// ``ContentHash`` of the examined bytes (16 hex digits), checked again
    /// when the file is copied for loading.
    let hash: String?
    let result: Result
    /// The file details, decoded only when read (`inspect`, `--json`).
    let deferredDetails: CompactDeferred<PluginRecord.FileDetails>?
    /// For a plugin quarantined after a good scan (the host died in its
    /// init, say): what the scan had learned, so it is still named.
    var plugin: ScannedPlugin? = nil

    init(identity: FileIdentity, hash: String?, result: Result, details: PluginRecord.FileDetails?, plugin: ScannedPlugin? = nil) {
        self.init(identity: identity, hash: hash, result: result, deferredDetails: details.map(CompactDeferred.init), plugin: plugin)
    }

    init(identity: FileIdentity, hash: String?, result: Result, deferredDetails: CompactDeferred<PluginRecord.FileDetails>?, plugin: ScannedPlugin?) {
        self.identity = identity
        self.hash = hash
        self.result = result
        self.deferredDetails = deferredDetails
        self.plugin = plugin
    }
}

extension CacheEntry {
    // Flat keys rather than the synthesized nesting of `Result`: one keyed
    // container per entry is read on every warm start, per plugin.
    private enum Key: String, CodingKey {
        case identity, hash, details, plugin, code, reason, quarantine
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(identity, forKey: .identity)
        try container.encodeIfPresent(hash, forKey: .hash)
        try container.encodeIfPresent(deferredDetails, forKey: .details)
        switch result {
        case let .plugin(plugin):
            try container.encode(plugin, forKey: .plugin)
        case let .rejected(code, reason):
            try container.encode(code, forKey: .code)
            try container.encode(reason, forKey: .reason)
        case let .quarantined(quarantine):
            try container.encode(quarantine, forKey: .quarantine)
            try container.encodeIfPresent(plugin, forKey: .plugin)
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        identity = try container.decode(FileIdentity.self, forKey: .identity)
        hash = try container.decodeIfPresent(String.self, forKey: .hash)
        deferredDetails = try container.decodeIfPresent(CompactDeferred<PluginRecord.FileDetails>.self, forKey: .details)
        let scanned = try container.decodeIfPresent(ScannedPlugin.self, forKey: .plugin)
        if let quarantine = try container.decodeIfPresent(Quarantine.self, forKey: .quarantine) {
            result = .quarantined(quarantine)
            plugin = scanned
        } else if let scanned {
            result = .plugin(scanned)
        } else {
            result = .rejected(
                code: try container.decode(String.self, forKey: .code), reason: try container.decode(String.self, forKey: .reason))
        }
    }
}

extension CacheEntry {
    /// `old` (the file's entry, if any) turned into a quarantine of the file
    /// now at `identity`, keeping what the scan read from it.
    static func quarantining(_ old: CacheEntry?, identity: FileIdentity, _ quarantine: Quarantine) -> CacheEntry {
        var plugin: ScannedPlugin?
        if case let .plugin(scanned)? = old?.result { plugin = scanned }
        return CacheEntry(
            identity: identity, hash: old?.identity == identity ? old?.hash : nil,
            result: .quarantined(quarantine), deferredDetails: old?.deferredDetails, plugin: plugin ?? old?.plugin)
    }
}
