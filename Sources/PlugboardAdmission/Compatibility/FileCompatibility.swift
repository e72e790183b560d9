#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// The checks made on a plugin file *before* `dlopen`, so that a file built
/// for another machine, toolchain or SDK never gets to run its initializers.
package enum FileCompatibility {
    package static let entrySymbol = "plugboard_entry"
    /// The `Plugin` protocol descriptor: only a copy of the SDK defines it.
    static let sdkProtocolSymbol = "$s9Plugboard6PluginMp"

    /// A section only Swift code has: every plugin defines at least its
    /// `Plugin` type, so this section is never empty in one.
    static let swiftTypeSection = "swift5_type_metadata"

    /// The SDK ABI a plugin file was compiled against, from the ABI marker it references.
    static func compiledABI(of image: ELFImage) -> ABIVersion? {
        image.symbols.undefined(withPrefixes: [SwiftSymbol.abiMarkerPrefix]).lazy.compactMap { SwiftSymbol.abiMarkerVersion($0.name) }.first
    }

    /// The first reason `image` must not be loaded into this host, if any.
    /// Cheapest and most telling first; all from the file's bytes, so a
    /// file refused here runs no code anywhere.
    package static func problem(in image: ELFImage, _ path: String, _ environment: HostEnvironment) -> PluginLoadError? {
        guard let entry = image.definition(of: entrySymbol) else { return .noEntrySymbol(path: path) }
        guard entry.isFunction else {
            return .entryNotFunction(path: path, detail: "it is a data object, not a function")
        }
        guard image.isExecutable(entry.value) else {
            return .entryNotFunction(path: path, detail: "its address 0x\(String(entry.value, radix: 16)) is outside every executable segment")
        }
        if image.defines(sdkProtocolSymbol) { return .sdkEmbedded(path: path) }
        guard (image.sectionSize(swiftTypeSection) ?? 0) > 0 else { return .notSwiftPlugin(path: path) }
        guard let pluginABI = compiledABI(of: image) else { return .noSDKMarker(path: path) }
        if let host = environment.sdkEmbeddedIn, image.needed.contains(PluginDirectory.sdkSoname) {
            return .sdkDuplicated(
                path: path, pluginSDK: "\(PluginDirectory.sdkSoname) (a dynamic library, as it should)",
                hostSDK: "a static copy inside \(host)")
        }
        if let plugin = image.toolchainComment, let host = environment.runtimeToolchain, plugin != host {
            return .toolchainMismatch(path: path, plugin: plugin, host: host)
        }
        // Another major first: such a plugin also misses removed API, but the
        // fix is to rebuild it, not to upgrade the host.
        if pluginABI.major != environment.sdkABI.major {
            return .sdkABIMismatch(path: path, plugin: pluginABI, host: environment.sdkABI)
        }
        // Strong undefined SDK symbols the host's SDK image lacks: dlopen would
        // fail on them with a mangled name; name the API instead.
        let missing = image.symbols.undefined(withPrefixes: SwiftSymbol.sdkPrefixes).filter {
            !$0.isWeak && SwiftSymbol.abiMarkerVersion($0.name) == nil && !environment.sdkDefines($0.name)
        }
        if !missing.isEmpty {
            return .missingSDKSymbols(
                path: path, symbols: missing.map { SwiftSymbol.demangle($0.name) },
                pluginSDK: "ABI \(pluginABI)", hostSDK: environment.sdkLabel)
        }
        if let problem = libraryPathProblem(in: image, path) { return problem }
        if !environment.sdkDefines(SwiftSymbol.abiMarker(pluginABI)) {
            // (Another major was refused above.)
            if pluginABI.minor > environment.sdkABI.minor {
                return .sdkTooNew(path: path, plugin: pluginABI, host: environment.sdkABI)
            }
            return .sdkABIMismatch(path: path, plugin: pluginABI, host: environment.sdkABI)
        }
        return nil
    }

    /// A library the plugin needs that the dynamic loader would find outside
    /// admission: a needed name with a `/` is loaded from that path, and a
    /// run path other than `$ORIGIN` (the private copy's own folder) or a
    /// fixed absolute folder (the toolchain's) searches folders beside the
    /// private copy (`$ORIGIN/..`) or the working directory (a relative one),
    /// where another local user may put a library.
    static func libraryPathProblem(in image: ELFImage, _ path: String) -> PluginLoadError? {
        // Searched as bytes: `contains` on a `String` is Foundation's search.
        if let needed = image.needed.first(where: { $0.utf8.contains(UInt8(ascii: "/")) }) {
            return .unsafeLibraryPath(path: path, detail: "it needs \(needed) by a path")
        }
        if let entry = image.runpath.first(where: { $0 != "$ORIGIN" && $0 != "${ORIGIN}" && !($0.hasPrefix("/") && !$0.utf8.contains(UInt8(ascii: "$"))) }) {
            return .unsafeLibraryPath(path: path, detail: "its run path has \(entry.isEmpty ? "an empty entry (the working directory)" : entry)")
        }
        return nil
    }

    static func map(_ error: ELFImage.ReadError, _ path: String) -> PluginLoadError {
        switch error {
        case let .cannotOpen(code): .unreadable(path: path, reason: String(cString: strerror(code)))
        case .notRegularFile: .notAFile(path: path, kind: "special file")
        case .empty: .emptyFile(path: path)
        case .notELF: .notELF(path: path)
        case let .unsupportedClass(elfClass):
            .wrongArchitecture(path: path, found: elfClass == 1 ? "32-bit ELF" : "ELF class \(elfClass)", expected: machineName(ELFImage.hostMachine))
        case .unsupportedByteOrder:
            .wrongArchitecture(path: path, found: "big-endian ELF", expected: machineName(ELFImage.hostMachine))
        case let .wrongMachine(found, expected):
            .wrongArchitecture(path: path, found: machineName(found), expected: machineName(expected))
        case let .notSharedObject(type): .notSharedObject(path: path, elfType: type)
        case let .truncated(what): .malformed(path: path, detail: "\(what) runs past the end of the file")
        case let .malformed(what): .malformed(path: path, detail: what)
        }
    }

    static func machineName(_ machine: UInt16) -> String {
        switch machine {
        case 3: "i386"
        case 40: "arm"
        case 62: "x86_64"
        case 183: "aarch64"
        case 243: "riscv"
        case 21: "ppc64"
        default: "ELF machine \(machine)"
        }
    }
}

extension PluginRecord.FileDetails {
    /// What the file says before loading, for `inspect` and the cache.
    package init(_ image: ELFImage) {
        self.init(
            size: image.fileSize, architecture: FileCompatibility.machineName(image.machine),
            toolchain: image.toolchainComment, sdkABI: FileCompatibility.compiledABI(of: image),
            needed: image.needed, runpath: image.runpath,
            hasEntryPoint: image.defines(FileCompatibility.entrySymbol))
    }
}
