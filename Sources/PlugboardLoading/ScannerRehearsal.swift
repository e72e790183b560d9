import Plugboard
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardAdmission

/// What a spare scanner does before it says hello: one scan of a plugin
/// built into the host, through every step a real scan takes but the
/// `dlopen`, its answer encoded and not sent.
///
/// A spare waits for the length of a build; without this, its first
/// request paid the first use of the coders, of the SDK's descriptor code,
/// of the services and of the runtime's caches: about half of the
/// scanner's share of a hot reload's verification (CHANGELOG.md, "Host library 3.0.0").
enum ScannerRehearsal {
    /// Set in a spare's environment (``StartedScanner/start(_:passing:adding:rehearsing:)``).
    static let variable = "PLUGBOARD_SCANNER_REHEARSE"

    /// The built-in plugin's image, checked as any plugin's is: its
    /// descriptor must bind to the host's SDK copy.
    static func image(environment: HostEnvironment) -> Result<LoadedImage, PluginLoadError> {
        // The scanner's own executable stands for the library it came from.
        guard let handle = dlopen(nil, RTLD_NOW) else { return .failure(.loadFailed(path: path, dlerror: "no handle to the executable")) }
        let raw = PluginExport.descriptor(
            for: RehearsalPlugin.self, id: "plugboard.scanner.rehearsal", version: "1.0.0", provides: [],
            services: [Services.Logging.id, Services.Configuration.id])
        return PluginLoader.image(DynamicLibrary(handle: handle, path: path), describedBy: raw, reportedAs: path, environment: environment)
    }

    static let path = "(scanner rehearsal)"
}

/// Does what a small plugin does: takes its services, contributes nothing.
private final class RehearsalPlugin: Plugin {
    init(context: PluginContext) throws {
        _ = try context.service(Services.Logging.self)
        _ = try context.service(Services.Configuration.self)
    }

    func contributions() -> [Contribution] { [] }
}
