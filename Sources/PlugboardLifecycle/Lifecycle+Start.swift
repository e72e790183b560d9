@_spi(PlugboardHost) import Plugboard
import PlugboardCore
import PlugboardAdmission
import PlugboardLoading
import PlugboardCatalog
import PlugboardServices

extension Lifecycle {
    /// Where a generation's code comes from.
    enum InProcessSource {
        /// Admitted bytes, loaded now (a first start, a reload).
        case image(LoadableImage)
        /// An image already mapped (a dependent started again on what it ran).
        case loaded(LoadedImage)
    }

    /// The one start path of every in-process generation (first activation,
    /// reload, a dependent's restart in a cascade): loads the image if it
    /// is not yet, creates the plugin, restores `state` before it activates,
    /// activates it and checks its providers, each step with a crash-journal
    /// note. `interruptedStarts` goes into the notes (see ``Catalog``).
    func startInProcess(
        _ source: InProcessSource, path: String, identity: FileIdentity?, generation: Int, state: SavedState,
        activePlugins: Set<String>, interruptedStarts: Int? = nil
    ) -> Result<(live: LivePlugin, note: String?), PluginLoadError> {
        let id = switch source {
        case let .image(image): image.scan.id
        case let .loaded(loaded): loaded.descriptor.id
        }
        let date = Quarantine.now()
        let note = { (phase: Quarantine.Phase) in
            CrashJournal.Note(pluginID: id, path: path, identity: identity, phase: phase, date: date, interruptedStarts: interruptedStarts)
        }
        let loaded: LoadedImage
        switch source {
        case let .loaded(image): loaded = image
        case let .image(image):
            switch journal.record(note(.`init`), { PluginLoader.load(image, environment: environment) { journal.registerImage($0, note: note(.thread)) } }) {
            case let .success(success): loaded = success
            case let .failure(error): return .failure(error)
            }
        }
        var stateNote = state.note
        let defaults = journal.record(note(.`init`)) { loaded.factory.defaultConfiguration }
        let context = services.context(for: loaded.descriptor, defaults: defaults, generation: generation, activePlugins: activePlugins)
        // What it asks through its context while it starts gets what is active.
        let started = services.starting.during(ServiceOwner(pluginID: id, generation: generation)) { Activation.start(
            loaded, path: path, generation: generation, context: context, registry: registry, journal: journal, note: note,
            beforeActivate: { instance in
                guard let saved = state.bytes else { return }
                guard let stateful = instance as? any ReloadableState else {
                    stateNote = "the new generation does not adopt ReloadableState; it starts fresh"
                    return
                }
                do {
                    try stateful.restore(encodedState: saved)
                    stateNote = "state handed over"
                } catch {
                    stateNote = "state not restored: the new code cannot decode the old state (\(error)); it starts fresh"
                }
            }) }
        switch started {
        case var .success(live):
            live.identity = identity
            return .success((live, stateNote))
        case let .failure(error):
            services.retire(id, generation: generation)
            return .failure(error)
        }
    }
}
