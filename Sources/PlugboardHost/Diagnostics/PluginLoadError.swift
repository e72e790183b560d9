import Plugboard

/// Why one plugin file did not become an active plugin.
///
/// Each case has a stable ``code`` for scripts and a ``message`` for people
/// that names the file, both sides' values where there are two, and the fix.
/// Loading a directory never throws these: they are recorded per file in
/// ``PluginRecord`` and the other plugins carry on.
public enum PluginLoadError: Error, Sendable, Equatable {
    // The file itself (checked before dlopen).
    case unreadable(path: String, reason: String)
    case notAFile(path: String, kind: String)
    case emptyFile(path: String)
    case notELF(path: String)
    case wrongArchitecture(path: String, found: String, expected: String)
    case notSharedObject(path: String, elfType: UInt16)
    case malformed(path: String, detail: String)
    case noEntrySymbol(path: String)
    case entryNotFunction(path: String, detail: String)
    case notSwiftPlugin(path: String)
    case noSDKMarker(path: String)
    case fileChanged(path: String, detail: String)
    case toolchainMismatch(path: String, plugin: String, host: String)
    case sdkEmbedded(path: String)
    case sdkABIMismatch(path: String, plugin: ABIVersion, host: ABIVersion)
    case sdkTooNew(path: String, plugin: ABIVersion, host: ABIVersion)
    case missingSDKSymbols(path: String, symbols: [String], pluginSDK: String, hostSDK: String)
    case duplicateFile(path: String, original: String)
    // Loading and the descriptor.
    case loadFailed(path: String, dlerror: String)
    case nullDescriptor(path: String)
    case badMagic(path: String, found: UInt32)
    case unsupportedLayout(path: String, found: UInt32, expected: UInt32)
    case invalidDescriptor(path: String, detail: String)
    case sdkDuplicated(path: String, pluginSDK: String, hostSDK: String)
    case interfaceVersion(path: String, interface: String, provided: SemanticVersion, host: SemanticVersion)
    case duplicateID(path: String, id: String, kept: String)
    // Running the plugin's code.
    case initFailed(path: String, id: String, error: String)
    case activateFailed(path: String, id: String, error: String)
    case providerTypeMismatch(path: String, id: String, interface: String, expected: String, found: String)
    case missingProvider(path: String, id: String, interface: String)
    case disabled(path: String, id: String, source: String)
    // Hot reload.
    case verificationCrashed(path: String, detail: String)
    case reloadIDMismatch(path: String, expected: String, found: String)
    case notLoaded(path: String, id: String)
    // Scanning and crash containment.
    case quarantined(path: String, quarantine: Quarantine)
    case scannerUnavailable(path: String, detail: String)
    /// Found by the scanner process or remembered by the registry cache: the
    /// code and reason as they were first reported.
    case reported(path: String, code: String, reason: String)

    /// The status a plugin with this error gets.
    public var status: PluginStatus {
        switch self {
        case .initFailed, .activateFailed, .providerTypeMismatch, .missingProvider: .failed
        case .disabled: .disabled
        case .quarantined: .quarantined
        default: .rejected
        }
    }

    /// Stable machine-readable code (part of the CLI's JSON contract).
    public var code: String {
        switch self {
        case .unreadable: "unreadable"
        case .notAFile: "not-a-file"
        case .emptyFile: "empty-file"
        case .notELF: "not-elf"
        case .wrongArchitecture: "wrong-architecture"
        case .notSharedObject: "not-shared-object"
        case .malformed: "malformed-elf"
        case .noEntrySymbol: "no-entry-symbol"
        case .entryNotFunction: "entry-not-function"
        case .notSwiftPlugin: "not-swift-plugin"
        case .noSDKMarker: "no-sdk-marker"
        case .fileChanged: "file-changed"
        case .toolchainMismatch: "toolchain-mismatch"
        case .sdkEmbedded: "sdk-embedded"
        case .sdkABIMismatch: "sdk-abi-mismatch"
        case .sdkTooNew: "sdk-too-new"
        case .missingSDKSymbols: "missing-sdk-symbols"
        case .duplicateFile: "duplicate-file"
        case .loadFailed: "load-failed"
        case .nullDescriptor: "null-descriptor"
        case .badMagic: "bad-magic"
        case .unsupportedLayout: "descriptor-layout"
        case .invalidDescriptor: "invalid-descriptor"
        case .sdkDuplicated: "sdk-duplicated"
        case .interfaceVersion: "interface-version"
        case .duplicateID: "duplicate-id"
        case .initFailed: "init-failed"
        case .activateFailed: "activate-failed"
        case .providerTypeMismatch: "provider-type-mismatch"
        case .missingProvider: "missing-provider"
        case .disabled: "disabled"
        case .verificationCrashed: "verify-crashed"
        case .reloadIDMismatch: "reload-id-mismatch"
        case .notLoaded: "not-loaded"
        case let .quarantined(_, quarantine): quarantine.code
        case .scannerUnavailable: "scanner-unavailable"
        case let .reported(_, code, _): code
        }
    }

    /// The file the error is about.
    public var path: String {
        switch self {
        case let .unreadable(path, _), let .notAFile(path, _), let .emptyFile(path), let .notELF(path),
             let .wrongArchitecture(path, _, _), let .notSharedObject(path, _), let .malformed(path, _),
             let .noEntrySymbol(path), let .entryNotFunction(path, _), let .notSwiftPlugin(path), let .noSDKMarker(path),
             let .fileChanged(path, _), let .quarantined(path, _), let .scannerUnavailable(path, _), let .reported(path, _, _),
             let .toolchainMismatch(path, _, _), let .sdkEmbedded(path),
             let .sdkABIMismatch(path, _, _), let .sdkTooNew(path, _, _), let .missingSDKSymbols(path, _, _, _),
             let .duplicateFile(path, _), let .loadFailed(path, _), let .nullDescriptor(path),
             let .badMagic(path, _), let .unsupportedLayout(path, _, _), let .invalidDescriptor(path, _),
             let .sdkDuplicated(path, _, _), let .interfaceVersion(path, _, _, _), let .duplicateID(path, _, _),
             let .initFailed(path, _, _), let .activateFailed(path, _, _),
             let .providerTypeMismatch(path, _, _, _, _), let .missingProvider(path, _, _), let .disabled(path, _, _),
             let .verificationCrashed(path, _), let .reloadIDMismatch(path, _, _), let .notLoaded(path, _):
            path
        }
    }

    /// What is wrong and what to do, without the path (``message`` adds it).
    public var reason: String {
        switch self {
        case let .unreadable(_, reason):
            "cannot read the file (\(reason)); check that it exists and its permissions allow reading"
        case let .notAFile(_, kind):
            "is a \(kind), not a plugin file; plugins are .so files built by `swift build` from a package with a .dynamic library product"
        case .emptyFile:
            "the file is empty; rebuild the plugin or remove the file"
        case .notELF:
            "not an ELF shared object (no ELF magic); only .so files built by SwiftPM can be loaded"
        case let .wrongArchitecture(_, found, expected):
            "built for \(found), this host runs on \(expected); rebuild the plugin on/for \(expected)"
        case let .notSharedObject(_, type):
            "an ELF file of type \(type), not a shared object; build the plugin as `.library(type: .dynamic)`"
        case let .malformed(_, detail):
            "a damaged ELF file (\(detail)); the copy is probably truncated: rebuild or copy it again"
        case .noEntrySymbol:
            "no `plugboard_entry` symbol: this library is not a Plugboard plugin; export the entry point with `@_cdecl(\"plugboard_entry\")` as the plugin guide shows"
        case let .entryNotFunction(_, detail):
            "`plugboard_entry` is not code (\(detail)); export it with `@_cdecl(\"plugboard_entry\")` on a function returning `PluginExport.descriptor(...)`"
        case .notSwiftPlugin:
            "has no Swift type metadata, so it was not built from a Swift plugin package; build the plugin with SwiftPM from Swift sources that depend on the Plugboard SDK"
        case .noSDKMarker:
            "does not reference the SDK's ABI marker (plugboard_sdk_abi_*), so it was not built against the Plugboard SDK; depend on `.product(name: \"Plugboard\", package: \"SDK\")` and return `PluginExport.descriptor(...)` from `plugboard_entry`"
        case let .fileChanged(_, detail):
            "changed while Plugboard was reading it (\(detail)); install plugins by copying to a temporary name in the same directory and renaming it into place (`cp lib.so DIR/.lib.so.tmp && mv DIR/.lib.so.tmp DIR/lib.so`), then start the host again (a changed file is examined again)"
        case let .quarantined(_, quarantine):
            quarantine.reason
        case let .reported(_, _, reason):
            reason
        case let .scannerUnavailable(_, detail):
            "not scanned, so not loaded: the scanner process could not run (\(detail)); a host executable must link PlugboardHost (its scanner hook runs before main), or set `PluginHost.Configuration.scanner` to an executable that does, such as `plugboard`"
        case let .toolchainMismatch(_, plugin, host):
            "built with another Swift toolchain (plugin: \(plugin); host: \(host)); Swift has no stable ABI on Linux, rebuild the plugin with the host's toolchain"
        case .sdkEmbedded:
            "contains its own copy of the Plugboard SDK; depend on the SDK's product `.product(name: \"Plugboard\", package: \"SDK\")` (a dynamic library) instead of copying or statically linking its sources"
        case let .sdkABIMismatch(_, plugin, host):
            "compiled against SDK ABI \(plugin), the host has SDK ABI \(host); majors must be equal: rebuild the plugin against the host's SDK"
        case let .sdkTooNew(_, plugin, host):
            "compiled against SDK ABI \(plugin), newer than the host's SDK ABI \(host); rebuild the plugin against the host's SDK or upgrade the host"
        case let .missingSDKSymbols(_, symbols, pluginSDK, hostSDK):
            "uses SDK API the host's SDK lacks: \(symbols.joined(separator: "; ")) (plugin built against SDK \(pluginSDK), host has SDK \(hostSDK)); rebuild the plugin against the host's SDK or upgrade the host"
        case let .duplicateFile(_, original):
            "is the same file as \(original) (symlinks are followed); remove one of them"
        case let .loadFailed(_, dlerror):
            "dlopen failed: \(dlerror)"
        case .nullDescriptor:
            "`plugboard_entry` returned a null descriptor; return `PluginExport.descriptor(...)` from it"
        case let .badMagic(_, found):
            "the descriptor has magic 0x\(String(found, radix: 16)), expected 0x\(String(Descriptor.magic, radix: 16)); `plugboard_entry` must return `PluginExport.descriptor(...)`"
        case let .unsupportedLayout(_, found, expected):
            "descriptor layout \(found), this host reads layout \(expected); rebuild the plugin against the host's SDK"
        case let .invalidDescriptor(_, detail):
            "invalid descriptor: \(detail)"
        case let .sdkDuplicated(_, pluginSDK, hostSDK):
            "binds to a second copy of the SDK (plugin uses \(pluginSDK), host uses \(hostSDK)); the process must hold one copy: the host must depend on `.product(name: \"Plugboard\", package: \"SDK\")` in every target of its Package.swift (never an SDK target), and the plugin must link that product dynamically"
        case let .interfaceVersion(_, interface, provided, host):
            "provides \(interface) \(provided), the host offers \(interface) \(host); accepted are equal majors with a minor <= the host's (0.x: equal minors); rebuild the plugin against the host's interface"
        case let .duplicateID(_, id, kept):
            "plugin id \(id) is also provided by \(kept), which was kept (higher version, or first by path); remove one of them"
        case let .initFailed(_, id, error):
            "plugin \(id) threw while being created: \(error)"
        case let .activateFailed(_, id, error):
            "plugin \(id) threw while activating: \(error)"
        case let .providerTypeMismatch(_, id, interface, expected, found):
            "plugin \(id) gave a \(found) for \(interface), the host expects \(expected)"
        case let .missingProvider(_, id, interface):
            "plugin \(id) declares \(interface) in `provides:` but `contributions()` has no provider for it"
        case let .disabled(_, id, source):
            "plugin \(id) is disabled by \(source)"
        case let .verificationCrashed(_, detail):
            "crashed while being verified in a child process (\(detail)); the running version was kept"
        case let .reloadIDMismatch(_, expected, found):
            "is plugin \(found), not \(expected); a reload must keep the plugin id"
        case let .notLoaded(_, id):
            "plugin \(id) is not active in this host; load it before reloading it"
        }
    }

    /// The full human message: file, then reason.
    public var message: String { "\(path): \(reason)" }
}

extension PluginLoadError: CustomStringConvertible {
    public var description: String { message }
}
