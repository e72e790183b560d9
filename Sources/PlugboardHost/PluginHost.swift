@_spi(PlugboardHost) import Plugboard
import Synchronization

/// The facade a host author holds: declare extension points, load the
/// plugins of a directory, read providers from ``registry``, shut down.
///
/// ```swift
/// let host = PluginHost(configuration: .init(pluginsDirectory: "/opt/app/plugins"))
/// host.declare(Commands.self)
/// let records = try host.loadAll()
/// for command in host.registry.providers(of: Commands.self) { print(command.name) }
/// host.shutdown()
/// ```
///
/// A file that fails a check or whose code throws is recorded with its
/// reason (see ``PluginRecord``) and the others carry on. Thread-safe;
/// loading runs plugin code on the calling thread.
public final class PluginHost: Sendable {
    /// How the host loads plugins and what it offers them.
    public struct Configuration: Sendable {
        /// Directory scanned by ``loadAll()``.
        public var pluginsDirectory: String?
        /// Plugin ids kept out, with where that was decided (shown in `disabled` records).
        public var disabledPlugins: [String: String]
        /// The host configuration file's contents: toggles, denied services,
        /// configuration overrides (see ``HostConfiguration/load(from:)``).
        public var settings: HostConfiguration
        /// Where the storage service keeps each plugin's data
        /// (`<dataDirectory>/<plugin id>/`). Without one, storage is denied.
        public var dataDirectory: String?
        /// Where plugin log messages go.
        public var logSink: LogSink
        /// Where hot reload copies each generation (default: a per-process
        /// directory under the system temp directory).
        public var generationsDirectory: String?

        public init(
            pluginsDirectory: String? = nil, disabledPlugins: [String: String] = [:],
            settings: HostConfiguration = HostConfiguration(), dataDirectory: String? = nil,
            logSink: LogSink = .standardError, generationsDirectory: String? = nil
        ) {
            self.pluginsDirectory = pluginsDirectory
            self.disabledPlugins = disabledPlugins
            self.settings = settings
            self.dataDirectory = dataDirectory
            self.logSink = logSink
            self.generationsDirectory = generationsDirectory
        }

        /// Every disabled id with its source: ``disabledPlugins`` and
        /// `"enabled": false` entries of ``settings``.
        var allDisabled: [String: String] {
            var all = disabledPlugins
            for (id, plugin) in settings.plugins where !plugin.enabled {
                all[id] = all[id] ?? "\(settings.file ?? "the host configuration") (plugins.\(id).enabled is false)"
            }
            return all
        }
    }

    /// Where providers are read.
    public let registry = ExtensionRegistry()
    public let configuration: Configuration
    let environment = HostEnvironment.current
    let state = Mutex(State())
    /// Serialises loads, reloads and shutdown: each sees the live set the
    /// previous one left. (Plugin code runs under it: a plugin must not call
    /// back into its host's lifecycle.)
    let lifecycle = Mutex(())
    let generationFiles: GenerationFiles

    struct State {
        var records: [PluginRecord] = []
        /// In activation order.
        var live: [LivePlugin] = []
    }

    let services: HostServices

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.generationFiles = GenerationFiles(directory: configuration.generationsDirectory)
        self.services = HostServices(
            configuration: configuration.settings, dataDirectory: configuration.dataDirectory,
            logSink: configuration.logSink)
    }

    /// Problems noticed outside loading: configuration, events, routes.
    /// (Storage errors are thrown to the plugin that hit them.)
    public var diagnostics: [HostDiagnostic] { services.allDiagnostics }

    /// Offers a service of the host's own to plugins that declare `key.id`
    /// (the host's Service Provider Interface). Call before loading.
    public func provideService<Key: ServiceKey>(_ key: Key.Type, _ make: @escaping @Sendable (_ pluginID: String) -> Key.Service) {
        services.provide(Key.id) { make($0) }
    }

    /// Declares an extension point. Providers of undeclared interfaces are
    /// ignored (with a warning on the plugin's record).
    public func declare<Point: ExtensionPoint>(_ point: Point.Type) {
        registry.declare(DeclaredExtensionPoint(point))
    }

    /// What the host knows about every candidate file so far.
    public var records: [PluginRecord] { state.withLock { $0.records } }

    /// Ids of active plugins, in activation order.
    public var activePluginIDs: [String] { state.withLock { $0.live.map(\.id) } }

    /// Scans ``Configuration/pluginsDirectory`` and loads every candidate.
    ///
    /// - Returns: one record per candidate file, in file-name order.
    /// - Throws: only when the directory itself cannot be read.
    @discardableResult
    public func loadAll() throws(PluginDirectory.ScanError) -> [PluginRecord] {
        guard let directory = configuration.pluginsDirectory else { return [] }
        let records = load(try PluginDirectory.scan(directory))
        let known = Set(records.compactMap(\.id))
        for id in configuration.settings.plugins.keys.sorted() where !known.contains(id) {
            services.report(HostDiagnostic(.warning, code: "config-unknown-plugin",
                message: "configures plugin \(id), which is not in \(directory); ignored",
                file: configuration.settings.file, keyPath: "plugins.\(id)"))
        }
        return records
    }

    /// Loads a plugin you intend to hot-reload: from a private copy (see
    /// ``reload(_:from:verifier:)``), so rebuilding `file` never touches the
    /// mapped image. The record shows `file` as its path.
    @discardableResult
    public func load(reloadable file: String) -> PluginRecord {
        let absolute = PluginDirectory.absolutePath(file)
        var candidate = PluginDirectory.candidate(at: absolute)
        if candidate.problem == nil {
            do {
                let copy = try generationFiles.copy(absolute, pluginID: "plugin", generation: 1)
                candidate = PluginCandidate(path: absolute, resolvedPath: copy, problem: nil)
            } catch {
                // Never fall back to loading `file` itself: a rebuild would overwrite the mapped image.
                candidate = PluginCandidate(path: absolute, resolvedPath: nil, problem: .unreadable(
                    path: absolute, reason: "cannot copy it for reloading into \(generationFiles.directory): \(error)"))
            }
        }
        return load([candidate])[0]
    }

    /// Loads specific files (absolute or relative paths).
    @discardableResult
    public func load(files: [String]) -> [PluginRecord] {
        load(files.map(PluginDirectory.candidate(at:)))
    }

    /// Loads candidates: checks and maps every file, settles duplicate ids,
    /// then creates and activates the survivors in file-name order and
    /// publishes their providers in one registry update.
    @discardableResult
    public func load(_ candidates: [PluginCandidate]) -> [PluginRecord] {
        lifecycle.withLock { _ in loadLocked(candidates) }
    }

    private func loadLocked(_ candidates: [PluginCandidate]) -> [PluginRecord] {
        var records: [PluginRecord] = []
        var images: [Int: LoadedImage] = [:]
        for candidate in candidates {
            var record = PluginRecord(path: candidate.path, resolvedPath: candidate.resolvedPath)
            if let image = PluginLoader.load(candidate, into: &record, environment: environment),
               checkInterfaces(image.descriptor, &record) {
                images[records.count] = image
            }
            records.append(record)
        }
        settleDuplicates(&records, &images)

        var started: [LivePlugin] = []
        let disabled = configuration.allDisabled
        for index in records.indices {
            guard let image = images[index] else { continue }
            let id = image.descriptor.id
            if let source = disabled[id] {
                records[index].fail(.disabled(path: records[index].path, id: id, source: source))
                continue
            }
            switch Activation.start(
                image, path: records[index].path, generation: 1,
                context: services.context(for: image.descriptor, defaults: image.factory.defaultConfiguration),
                registry: registry)
            {
            case let .success(live):
                records[index].status = .active
                records[index].generation = 1
                started.append(live)
            case let .failure(error):
                records[index].fail(error)
                services.retire(id)
            }
        }
        registry.replaceProviders(of: Set(started.map(\.id)), with: started.flatMap(\.providers))
        state.withLock { state in
            state.records.append(contentsOf: records)
            state.live.append(contentsOf: started)
        }
        return records
    }

    /// Deactivates every plugin in reverse activation order and empties the
    /// registry. Images stay mapped (they can never be unloaded).
    public func shutdown() {
        lifecycle.withLock { _ in shutdownLocked() }
    }

    private func shutdownLocked() {
        let live = state.withLock { state in
            defer { state.live.removeAll() }
            return state.live
        }
        registry.replaceProviders(of: Set(live.map(\.id)), with: [])
        for plugin in live.reversed() {
            plugin.instance.deactivate()
            services.retire(plugin.id, generation: plugin.generation)
        }
        generationFiles.removeIfPrivate()
    }

    // MARK: - Steps

    /// Rejects a plugin that provides a declared interface at an incompatible
    /// version; warns about interfaces the host does not declare.
    func checkInterfaces(_ descriptor: Descriptor, _ record: inout PluginRecord) -> Bool {
        for interface in descriptor.provides {
            guard let point = registry.declaredPoint(for: interface.id) else {
                record.warnings.append("provides \(interface), which this host does not declare; ignored")
                continue
            }
            if !InterfaceCompatibility.accepts(host: point.interface.version, provided: interface.version) {
                record.fail(.interfaceVersion(
                    path: record.path, interface: interface.id, provided: interface.version, host: point.interface.version))
                return false
            }
        }
        return true
    }

    /// One plugin per id: the highest version wins, ties go to the first file
    /// by name; a plugin already active in this host always wins.
    private func settleDuplicates(_ records: inout [PluginRecord], _ images: inout [Int: LoadedImage]) {
        let active = state.withLock { Dictionary($0.live.map { ($0.id, $0.path) }, uniquingKeysWith: { first, _ in first }) }
        var winner: [String: Int] = [:]
        for index in images.keys.sorted() {
            let id = images[index]!.descriptor.id
            if let kept = active[id] {
                records[index].fail(.duplicateID(path: records[index].path, id: id, kept: kept))
                images[index] = nil
                continue
            }
            guard let current = winner[id] else { winner[id] = index; continue }
            let loser: Int
            if images[index]!.descriptor.version > images[current]!.descriptor.version {
                winner[id] = index
                loser = current
            } else {
                loser = index
            }
            let kept = records[winner[id]!].path
            records[loser].fail(.duplicateID(path: records[loser].path, id: id, kept: kept))
            images[loser] = nil
        }
    }
}

extension PluginHost {
    /// The SDK release the host was built with.
    public var sdkVersion: String { environment.sdkVersion }
    /// The SDK ABI the host was built with.
    public var sdkABI: ABIVersion { environment.sdkABI }
    /// The Swift toolchain the host's runtime comes from.
    public var toolchain: String { environment.runtimeToolchain ?? environment.compiledToolchain }
}
