/// What the registry cache remembers about one plugin file.
struct CacheEntry: Sendable, Codable, Equatable {
    /// The outcome of examining the file.
    enum Result: Sendable, Codable, Equatable {
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
    let details: PluginRecord.FileDetails?
    /// For a plugin quarantined after a good scan (the host died in its
    /// init, say): what the scan had learned, so it is still named.
    var plugin: ScannedPlugin? = nil
}
