/// A compatible plugin the host admitted but has not activated: what the
/// scan learned, and where the checked bytes are.
struct AvailablePlugin: Sendable {
    let plugin: ScannedPlugin
    /// As found in the plugins directory (for messages).
    let path: String
    /// The file the path resolves to.
    let resolvedPath: String
    /// The file's identity and content hash when it was examined.
    let identity: FileIdentity
    let hash: String?
    /// The private copy of the examined bytes, when they were read in this
    /// process; a plugin known from the cache is copied when it activates.
    let copy: String?
}
