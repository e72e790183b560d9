import Plugboard

/// A plugin image that passed every check and is mapped, with its factory.
struct LoadedImage: Sendable {
    let library: DynamicLibrary
    let descriptor: Descriptor
    let factory: PluginFactory
}

/// Takes one candidate file through every check to a loaded image, in the
/// order of the contract: file checks, `dlopen`, entry symbol, descriptor,
/// one-SDK-copy check. No code of the plugin author's runs here.
enum PluginLoader {
    typealias Entry = @convention(c) () -> UnsafeRawPointer?

    /// Loads `candidate`, recording in `record` what it learns; nil if rejected.
    static func load(
        _ candidate: PluginCandidate, into record: inout PluginRecord, environment: HostEnvironment
    ) -> LoadedImage? {
        switch load(candidate, environment, &record) {
        case let .success(image): return image
        case let .failure(error):
            record.fail(error)
            return nil
        }
    }

    private static func load(
        _ candidate: PluginCandidate, _ environment: HostEnvironment, _ record: inout PluginRecord
    ) -> Result<LoadedImage, PluginLoadError> {
        let path = candidate.path
        if let problem = candidate.problem { return .failure(problem) }
        guard let file = candidate.resolvedPath else { return .failure(.unreadable(path: path, reason: "cannot resolve path")) }

        let image: ELFImage
        switch FileCompatibility.read(path: file, reportedAs: path) {
        case let .success(read): image = read
        case let .failure(error): return .failure(error)
        }
        record.file = PluginRecord.FileDetails(
            size: image.fileSize, architecture: FileCompatibility.machineName(image.machine),
            toolchain: image.toolchainComment, sdkABI: FileCompatibility.compiledABI(of: image),
            needed: image.needed, runpath: image.runpath,
            hasEntryPoint: image.defines(FileCompatibility.entrySymbol))
        if let problem = FileCompatibility.problem(in: image, path, environment) { return .failure(problem) }

        let library: DynamicLibrary
        switch DynamicLibrary.open(file) {
        case let .success(opened): library = opened
        case let .failure(error):
            if let symbol = error.undefinedSymbol, SwiftSymbol.isSDKSymbol(symbol) {
                return .failure(.missingSDKSymbols(
                    path: path, symbols: [SwiftSymbol.demangle(symbol)],
                    pluginSDK: record.file?.sdkABI.map { "ABI \($0)" } ?? "unknown", hostSDK: environment.sdkLabel))
            }
            return .failure(.loadFailed(path: path, dlerror: error.message))
        }
        guard let symbol = library.symbol(FileCompatibility.entrySymbol) else {
            return .failure(.noEntrySymbol(path: path))
        }
        let entry = unsafeBitCast(symbol, to: Entry.self)
        let descriptor: Descriptor
        switch Descriptor.read(entry(), path: path, environment: environment) {
        case let .success(read): descriptor = read
        case let .failure(error): return .failure(error)
        }
        record.id = descriptor.id
        record.version = descriptor.version
        record.provides = descriptor.provides
        record.services = descriptor.services
        record.sdkABI = descriptor.sdkABI
        record.sdkVersion = descriptor.sdkVersion
        record.toolchain = descriptor.toolchain

        // One SDK copy per process: the plugin's ABI marker must live in the
        // host's SDK image. (Compare images, not addresses: a plugin built
        // against an older minor binds an older marker of the same image.)
        let pluginSDK = UnsafeRawPointer(bitPattern: descriptor.markerBits).flatMap(DynamicLibrary.imagePath(containing:))
        if pluginSDK != environment.sdkImagePath {
            return .failure(.sdkDuplicated(path: path, pluginSDK: pluginSDK ?? "(unknown image)", hostSDK: environment.sdkPath))
        }
        // Taken exactly once: the descriptor holds it at +1.
        let object = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: descriptor.factoryBits)!).takeRetainedValue()
        guard let factory = object as? PluginFactory else {
            let metadata = unsafeBitCast(type(of: object) as AnyClass, to: UnsafeRawPointer.self)
            return .failure(.sdkDuplicated(
                path: path, pluginSDK: DynamicLibrary.imagePath(containing: metadata) ?? "(unknown image)",
                hostSDK: environment.sdkPath))
        }
        return .success(LoadedImage(library: library, descriptor: descriptor, factory: factory))
    }
}
