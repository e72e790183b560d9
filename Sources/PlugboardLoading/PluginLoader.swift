import Plugboard
import PlugboardCore
import PlugboardAdmission

/// A plugin image that passed every check and is mapped, with its factory.
package struct LoadedImage: Sendable {
    let library: DynamicLibrary
    package let descriptor: Descriptor
    package let factory: PluginExport.Factory
}

/// Loading a private copy of a plugin's admitted bytes (the checks on the
/// bytes are Admission's, before this): its constructors and entry run in
/// the scanner child first, in the host only once the child reported it
/// healthy.
package enum PluginLoader {
    typealias Entry = @convention(c) () -> UnsafeRawPointer?

    /// Loads an admitted image into the host: its private copy, whose
    /// descriptor must still say the plugin that was scanned. Nothing else
    /// can be loaded in the host process. `mapped` hears of the image once
    /// it is mapped, before any of its code runs but its constructors (crash
    /// attribution registers its address range there).
    package static func load(
        _ image: LoadableImage, environment: HostEnvironment, mapped: (DynamicLibrary) -> Void
    ) -> Result<LoadedImage, PluginLoadError> {
        let loaded = open(image.checked.copy, reportedAs: image.path, environment: environment, mapped: mapped)
        if case let .success(loaded) = loaded, loaded.descriptor.id != image.scan.id {
            return .failure(.fileChanged(
                path: image.path, detail: "it now says plugin \(loaded.descriptor.id), it was \(image.scan.id) when scanned"))
        }
        return loaded
    }

    /// In a child process (a scanner, or an isolated plugin's
    /// `plugboard-child`): loads the copy it was sent, phase by phase. Never
    /// called in the host process, whose only way in is ``load(_:environment:)``.
    package static func loadInChildProcess(
        _ file: String, reportedAs path: String, environment: HostEnvironment,
        phase: (Quarantine.Phase) -> Void
    ) -> Result<LoadedImage, PluginLoadError> {
        open(file, reportedAs: path, environment: environment, phase: phase, mapped: { _ in })
    }

    /// `dlopen`s `file` (a private copy of checked bytes), calls its entry,
    /// checks the descriptor and that it binds to the host's SDK copy.
    /// `phase` hears each phase before it starts. Errors name `path`.
    private static func open(
        _ file: String, reportedAs path: String, environment: HostEnvironment,
        phase: (Quarantine.Phase) -> Void = { _ in }, mapped: (DynamicLibrary) -> Void
    ) -> Result<LoadedImage, PluginLoadError> {
        phase(.dlopen)
        let library: DynamicLibrary
        switch DynamicLibrary.open(file) {
        case let .success(opened): library = opened
        case let .failure(error):
            if let symbol = error.undefinedSymbol, SwiftSymbol.isSDKSymbol(symbol) {
                return .failure(.missingSDKSymbols(
                    path: path, symbols: [SwiftSymbol.demangle(symbol)],
                    pluginSDK: "unknown", hostSDK: environment.sdkLabel))
            }
            return .failure(.loadFailed(path: path, dlerror: error.message))
        }
        mapped(library)
        guard let symbol = library.symbol(FileCompatibility.entrySymbol) else {
            return .failure(.noEntrySymbol(path: path))
        }
        phase(.entry)
        let entry = unsafeBitCast(symbol, to: Entry.self)
        let raw = entry()
        phase(.descriptor)
        return image(library, describedBy: raw, reportedAs: path, environment: environment)
    }

    /// What an entry returned, checked: the descriptor, that it binds to
    /// the host's SDK copy, and its factory. (A spare scanner's rehearsal
    /// starts here, with a descriptor of its own.)
    static func image(
        _ library: DynamicLibrary, describedBy raw: UnsafeRawPointer?, reportedAs path: String, environment: HostEnvironment
    ) -> Result<LoadedImage, PluginLoadError> {
        let descriptor: Descriptor
        switch Descriptor.read(raw, path: path, environment: environment) {
        case let .success(read): descriptor = read
        case let .failure(error): return .failure(error)
        }
        // One SDK copy per process: the plugin's ABI marker must live in the
        // host's SDK image. (Compare images, not addresses: a plugin built
        // against an older minor binds an older marker of the same image.)
        let pluginSDK = UnsafeRawPointer(bitPattern: descriptor.markerBits).flatMap(DynamicLibrary.imagePath(containing:))
        if pluginSDK != environment.sdkImagePath {
            return .failure(.sdkDuplicated(path: path, pluginSDK: pluginSDK ?? "(unknown image)", hostSDK: environment.sdkPath))
        }
        // Taken exactly once: the descriptor holds it at +1.
        let object = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: descriptor.factoryBits)!).takeRetainedValue()
        guard let factory = object as? PluginExport.Factory else {
            let metadata = unsafeBitCast(type(of: object) as AnyClass, to: UnsafeRawPointer.self)
            return .failure(.sdkDuplicated(
                path: path, pluginSDK: DynamicLibrary.imagePath(containing: metadata) ?? "(unknown image)",
                hostSDK: environment.sdkPath))
        }
        return .success(LoadedImage(library: library, descriptor: descriptor, factory: factory))
    }
}
