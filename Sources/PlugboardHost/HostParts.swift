import PlugboardCore
import PlugboardAdmission
import PlugboardRegistry
import PlugboardServices
import PlugboardLoading
import PlugboardCatalog
import PlugboardLifecycle

/// The host's parts, made once from its configuration in the order they
/// depend on each other: the leaves (diagnostics, services, the registry,
/// the state directory, taint, journal, admission), then the catalog, then
/// the lifecycle that owns every plugin's life. ``PluginHost`` keeps them
/// and forwards to them.
struct HostParts {
    let registry: ExtensionRegistry
    let services: HostServices
    let catalog: Catalog
    let lifecycle: Lifecycle
    let taint: HostTaint

    init(_ given: PluginHost.Configuration) {
        var configuration = given
        let environment = HostEnvironment.current
        // Lookups and triggers reach the lifecycle through this link, joined
        // once below: the registry and services exist before the lifecycle.
        let link = ActivationLink()
        let diagnostics = DiagnosticLog(
            capacity: configuration.observability.diagnosticsLimit, sink: configuration.observability.diagnosticSink)
        services = HostServices(
            configuration: configuration.settings, dataDirectory: configuration.paths.data, logSink: configuration.observability.logSink,
            storageQuota: configuration.storageQuota, diagnostics: diagnostics, activator: link)
        registry = ExtensionRegistry(activator: link)
        let state = StateDirectory(
            configured: configuration.paths.cache, checksOwnership: configuration.trust.directories.enforced, report: diagnostics.append)
        taint = HostTaint(report: diagnostics.append)
        let journal = CrashJournal(
            directory: state.path + "/journal", hangThreshold: configuration.crashJournal.hangThreshold, isUsable: state.isTrusted,
            taint: taint)
        let checksOwnership = configuration.trust.directories.enforced
        let admission = Admission(
            environment: environment, trust: configuration.trust.directories,
            lock: Self.lockPolicy(configuration, state: state, taint: taint),
            copies: PrivateCopies(
                directory: PrivateCopies.usableBase(configuration.paths.images, checksOwnership: checksOwnership, report: diagnostics.append),
                checksOwnership: checksOwnership),
            recordsSHA256: configuration.recordsSHA256)
        configuration.scanner = Self.sandboxed(configuration.scanner, copies: admission.copies, settingsFile: configuration.settings.file, taint: taint)
        catalog = Catalog(
            admission: admission,
            cache: RegistryCache(directory: state.path, environment: environment, isUsable: state.isTrusted),
            quarantines: SharedQuarantines(directory: state.path, isUsable: state.isTrusted),
            journal: journal,
            settings: .init(trust: configuration.trust.directories, scanner: configuration.scanner, disabled: configuration.allDisabled),
            registry: registry, services: services)
        lifecycle = Lifecycle(
            catalog: catalog, registry: registry, services: services, journal: journal, environment: environment,
            configuration: Self.lifecycleSettings(configuration), taint: taint)
        link.join(lifecycle)
    }

    /// What the lifecycle reads of `configuration`.
    private static func lifecycleSettings(_ configuration: PluginHost.Configuration) -> LifecycleSettings {
        LifecycleSettings(
            checksOwnership: configuration.trust.directories.enforced, scanner: configuration.scanner,
            ownKeyFiles: configuration.trust.ownKeyFiles,
            isolation: { id, signedByHost in configuration.isolation(of: id, signedByHost: signedByHost) },
            isolatesUnsigned: configuration.isolation.unsigned != nil, settings: configuration.settings,
            storageQuota: configuration.storageQuota, restartBudget: configuration.isolation.restartBudget,
            startTimeout: configuration.isolation.startTimeout, isolationEvents: configuration.observability.isolationEvents,
            childProgram: configuration.isolation.childProgram)
    }

    /// `scanner` with the policy its processes get (when it has a sandbox):
    /// they read the private copies and the settings file, and write only
    /// the verification's scratch folder (both made before a scanner
    /// starts, so their rules apply to a spare started before the first copy).
    private static func sandboxed(_ scanner: ScannerSettings, copies: PrivateCopies, settingsFile: String?, taint: HostTaint) -> ScannerSettings {
        guard let sandbox = scanner.sandbox else { return scanner }
        var scanner = scanner
        var policy = SandboxPolicy.scanner(copies: copies.directory, settingsFile: settingsFile, off: sandbox.layersOff)
        let scratch = policy.writes[0]
        scanner.preparePolicy = {
            guard (try? copies.prepare()) != nil else { return }
            _ = makeDirectories(scratch)
        }
        policy.grant(sandbox.grants)
        scanner.policy = policy
        scanner.onSandboxGap = { gap in
            taint.mark(HostTaint.scannerSandboxPartial, "its scanners run with their sandbox incomplete: \(gap)")
        }
        return scanner
    }

    /// The lock file in force: the configured one, else with signatures
    /// (required or preferred) the plugins directory's.
    private static func lockPolicy(_ configuration: PluginHost.Configuration, state: StateDirectory, taint: HostTaint) -> LockPolicy? {
        let trust = configuration.trust
        let signs = trust.requiresSignatures || !trust.trustedKeyFiles.isEmpty
        let path = trust.lockFile ?? (signs ? configuration.pluginsDirectory.map(LockFile.defaultPath(for:)) : nil)
        guard path != nil || trust.requiresSignatures else { return nil }
        let signatures = signs ? SignatureCheck(
            trustedKeyFiles: trust.trustedKeyFiles, isRequired: trust.requiresSignatures,
            channel: trust.lockChannel, checksOwnership: trust.directories.enforced,
            sequences: trust.sequenceRecords.map { AcceptedSequences(folder: $0, checksOwnership: trust.directories.enforced, report: taint.report) }
                ?? AcceptedSequences(stateDirectory: state.path, isUsable: state.isTrusted, report: taint.report),
            floor: trust.sequenceFloor) : nil
        return LockPolicy(path: path, checksOwnership: trust.directories.enforced, signatures: signatures, taint: taint)
    }
}
