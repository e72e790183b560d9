import PlugboardCore
import PlugboardServices
import PlugboardLoading

/// What the lifecycle reads of the host's ``PluginHost/Configuration``,
/// resolved by the facade (`HostParts`): the lifecycle's module sits below
/// the facade and never names the configuration itself.
package struct LifecycleSettings: Sendable {
    /// Whether the folders of plugin files are checked (``DirectoryTrust/enforced``).
    package var checksOwnership: Bool
    package var scanner: ScannerSettings
    /// ``PluginHost/Configuration/Trust/ownKeyFiles``.
    package var ownKeyFiles: [String]
    /// Where a plugin's code runs, given its id and whether the host signed it.
    package var isolation: @Sendable (_ id: String, _ signedByHost: Bool) -> PluginIsolation
    /// Whether unsigned plugins get a level of their own (``PluginHost/Configuration/Isolation/unsigned``).
    package var isolatesUnsigned: Bool
    package var settings: HostSettings
    package var storageQuota: StorageQuota
    package var restartBudget: RestartBudget
    package var startTimeout: Duration
    package var isolationEvents: (@Sendable (IsolationEvent) -> Void)?
    /// ``PluginHost/Configuration/Isolation/childProgram``.
    package var childProgram: String?

    package init(
        checksOwnership: Bool, scanner: ScannerSettings, ownKeyFiles: [String],
        isolation: @escaping @Sendable (_ id: String, _ signedByHost: Bool) -> PluginIsolation, isolatesUnsigned: Bool,
        settings: HostSettings, storageQuota: StorageQuota, restartBudget: RestartBudget, startTimeout: Duration,
        isolationEvents: (@Sendable (IsolationEvent) -> Void)?, childProgram: String? = nil
    ) {
        self.childProgram = childProgram
        self.checksOwnership = checksOwnership
        self.scanner = scanner
        self.ownKeyFiles = ownKeyFiles
        self.isolation = isolation
        self.isolatesUnsigned = isolatesUnsigned
        self.settings = settings
        self.storageQuota = storageQuota
        self.restartBudget = restartBudget
        self.startTimeout = startTimeout
        self.isolationEvents = isolationEvents
    }
}
