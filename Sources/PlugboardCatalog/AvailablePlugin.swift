import PlugboardCore
import PlugboardAdmission

/// A compatible plugin the host admitted but has not activated: what the
/// scan learned, and where the checked bytes are.
package struct AvailablePlugin: Sendable {
    package let plugin: ScannedPlugin
    /// As found in the plugins directory (for messages).
    package let path: String
    /// The real path the trust check walked to it.
    let resolvedPath: String
    /// The file's identity and content hash when it was examined.
    package let identity: FileIdentity
    package let hash: String?
    /// The admitted bytes and their scan, when they were admitted in this
    /// process; a plugin known from the cache is admitted when it activates.
    package let image: LoadableImage?
    /// Its activation triggers, typed once.
    package let triggers: [PluginTrigger]

    init(plugin: ScannedPlugin, path: String, resolvedPath: String, identity: FileIdentity, hash: String?, image: LoadableImage?) {
        self.plugin = plugin
        self.path = path
        self.resolvedPath = resolvedPath
        self.identity = identity
        self.hash = hash
        self.image = image
        triggers = plugin.triggers
    }
}
