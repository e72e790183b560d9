import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard
import PlugboardCore
import PlugboardAdmission
import PlugboardRegistry
import PlugboardLoading
import PlugboardIsolation

/// A plugin instance the host created and activated.
package struct LivePlugin: Sendable {
    /// Where its code runs.
    enum Running: Sendable {
        /// In the host's process.
        case inProcess(any Plugin, LoadedImage)
        /// In a child process.
        case isolated(IsolatedPlugin)
    }

    let id: String
    let path: String
    let generation: Int
    let running: Running
    /// Its providers, as registered (proxies, for an isolated plugin).
    var providers: [RegisteredProvider]
    /// The identity of the file its code was read from (for journal notes).
    var identity: FileIdentity? = nil
    /// Its version and the plugins it requires, as its descriptor says.
    var version = ""
    var requires: [PluginDependency] = []
    /// The admitted bytes' fingerprint (``ContentHash``), and when it started.
    var contentHash: String? = nil
    var activatedAt = Date()
    /// What an isolated plugin's child loads: kept to start it again when a
    /// plugin it requires is reloaded.
    var image: LoadableImage? = nil

    /// The instance, when it runs in process.
    var instance: (any Plugin)? {
        if case let .inProcess(instance, _) = running { return instance }
        return nil
    }

    package var isolated: IsolatedPlugin? {
        if case let .isolated(plugin) = running { return plugin }
        return nil
    }

    /// Deactivates it (in process) or stops its child (isolated).
    func stop() {
        switch running {
        case let .inProcess(instance, _): instance.deactivate()
        case let .isolated(plugin): plugin.stop()
        }
    }
}
