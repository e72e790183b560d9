@_spi(PlugboardHost) import Plugboard
import PlugboardCore
import PlugboardAdmission
import PlugboardRegistry
import PlugboardLoading
import PlugboardCatalog

/// Creates, activates and wires up one loaded plugin image: the only place
/// where a plugin author's code first runs.
enum Activation {
    /// Creates and activates the plugin in `image`, then collects and checks
    /// its providers. On failure the instance is released (and deactivated if
    /// it had activated), and the error says what happened.
    /// `journal` gets a note from `note` around init and around activate.
    static func start(
        _ image: LoadedImage, path: String, generation: Int, context: PluginContext,
        registry: ExtensionRegistry, journal: CrashJournal, note: (Quarantine.Phase) -> CrashJournal.Note,
        beforeActivate: (any Plugin) -> Void = { _ in }
    ) -> Result<LivePlugin, PluginLoadError> {
        let descriptor = image.descriptor
        let instance: any Plugin
        do {
            instance = try journal.record(note(.`init`)) { () throws(any Error) in try image.factory.make(context: context) }
        } catch {
            return .failure(.initFailed(path: path, id: descriptor.id, error: describe(error)))
        }
        beforeActivate(instance)
        do {
            try journal.record(note(.activate)) { () throws(any Error) in try instance.activate() }
        } catch {
            return .failure(.activateFailed(path: path, id: descriptor.id, error: describe(error)))
        }
        switch providers(of: instance, descriptor: descriptor, path: path, generation: generation, registry: registry) {
        case let .success(providers):
            return .success(LivePlugin(
                id: descriptor.id, path: path, generation: generation, running: .inProcess(instance, image),
                providers: providers, version: descriptor.version.description, requires: descriptor.requires))
        case let .failure(error):
            instance.deactivate()
            return .failure(error)
        }
    }

    /// The registered providers of `instance` for the interfaces the host
    /// declares; each checked against the point's provider type.
    private static func providers(
        of instance: any Plugin, descriptor: Descriptor, path: String, generation: Int, registry: ExtensionRegistry
    ) -> Result<[RegisteredProvider], PluginLoadError> {
        let contributions = instance.contributions()
        var result: [RegisteredProvider] = []
        for interface in descriptor.provides {
            guard let point = registry.declaredPoint(for: interface.id) else { continue }
            let matching = contributions.filter { $0.interfaceID == interface.id }
            guard !matching.isEmpty else {
                return .failure(.missingProvider(path: path, id: descriptor.id, interface: interface.id))
            }
            for contribution in matching {
                guard point.accepts(contribution.provider) else {
                    return .failure(.providerTypeMismatch(
                        path: path, id: descriptor.id, interface: interface.id, expected: point.providerTypeName,
                        found: String(reflecting: type(of: contribution.provider))))
                }
                result.append(RegisteredProvider(
                    pluginID: descriptor.id, generation: generation, interfaceID: interface.id,
                    provider: contribution.provider))
            }
        }
        return .success(result)
    }

    static func describe(_ error: any Error) -> String {
        String(describing: error)
    }
}
