import PlugboardCore
import PlugboardAdmission

/// What the registry cache remembers about one plugin file.
/// On disk as ``bytes()`` (see CacheEntry+Bytes.swift).
package struct CacheEntry: Sendable, Equatable {
    /// The outcome of examining the file.
    package enum Result: Sendable, Equatable {
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
    /// Facts read from the file without loading it (`inspect`, `--json`).
    let details: PluginRecord.FileDetails?
    /// For a plugin quarantined after a good scan (the host died in its
    /// init, say): what the scan had learned, so it is still named.
    var plugin: ScannedPlugin? = nil

    init(identity: FileIdentity, hash: String?, result: Result, details: PluginRecord.FileDetails?, plugin: ScannedPlugin? = nil) {
        self.identity = identity
        self.hash = hash
        self.result = result
        self.details = details
        self.plugin = plugin
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
            result: .quarantined(quarantine), details: old?.details, plugin: plugin ?? old?.plugin)
    }
}
