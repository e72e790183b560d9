import Plugboard
import CPlugboard
#if canImport(Glibc)
import Glibc
#endif

/// Why one plugin file did not become an active plugin.
///
/// A struct with an extensible ``Code`` (as swift-nio's `FileSystemError`):
/// codes can be added without breaking anyone who switches over them. Each
/// error names the file (``path``), says what is wrong and what to do
/// (``reason``), and the status its plugin gets. Loading a directory never
/// throws these: they are recorded per file in ``PluginRecord`` and the
/// other plugins carry on.
public struct PluginLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, machine-readable code (part of the CLI's JSON contract).
    public struct Code: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        public var description: String { rawValue }

        public static let unreadable = Code("unreadable")
        public static let notAFile = Code("not-a-file")
        public static let emptyFile = Code("empty-file")
        public static let notELF = Code("not-elf")
        public static let wrongArchitecture = Code("wrong-architecture")
        public static let notSharedObject = Code("not-shared-object")
        public static let malformed = Code("malformed-elf")
        public static let noEntrySymbol = Code("no-entry-symbol")
        public static let entryNotFunction = Code("entry-not-function")
        public static let notSwiftPlugin = Code("not-swift-plugin")
        public static let noSDKMarker = Code("no-sdk-marker")
        public static let fileChanged = Code("file-changed")
        public static let toolchainMismatch = Code("toolchain-mismatch")
        public static let sdkEmbedded = Code("sdk-embedded")
        public static let sdkABIMismatch = Code("sdk-abi-mismatch")
        public static let sdkTooNew = Code("sdk-too-new")
        public static let missingSDKSymbols = Code("missing-sdk-symbols")
        public static let duplicateFile = Code("duplicate-file")
        public static let loadFailed = Code("load-failed")
        public static let nullDescriptor = Code("null-descriptor")
        public static let badMagic = Code("bad-magic")
        public static let unsupportedLayout = Code("descriptor-layout")
        public static let invalidDescriptor = Code("invalid-descriptor")
        /// A plugin or interface id outside the documented set (reverse-DNS:
        /// ASCII letters, digits, `-`, `_`; two or more dot-separated parts;
        /// at most 200 bytes).
        public static let invalidID = Code("invalid-id")
        /// A service the descriptor asks for whose id is not reverse-DNS (as
        /// ``invalidID``).
        public static let invalidService = Code("invalid-service")
        /// An activation trigger that is not `startup`, `event:NAME` (NAME of
        /// ASCII letters, digits, `.`, `-`, `_`) or `route:/PREFIX` (PREFIX of
        /// URL path characters), or is longer than 200 bytes.
        public static let invalidTrigger = Code("invalid-trigger")
        /// A sandbox need (SDK 2.3) that is not `tcp-connect:PORT`,
        /// `tcp-bind:PORT` (1-65535), `network` or `read:/ABSOLUTE/PATH`.
        public static let invalidNeed = Code("invalid-need")
        /// A sandboxed plugin declares a need the host does not grant.
        public static let sandboxNeedNotGranted = Code("sandbox-need-not-granted")
        /// A sandbox that must be complete missed a layer on this machine.
        public static let sandboxUnavailable = Code("sandbox-unavailable")
        /// Bounds of an isolated plugin's child that must hold
        /// (``PluginIsolation/Limits/bounds``) cannot on this machine (no cgroup).
        public static let resourceBoundsUnavailable = Code("resource-bounds-unavailable")
        public static let sdkDuplicated = Code("sdk-duplicated")
        public static let interfaceVersion = Code("interface-version")
        public static let duplicateID = Code("duplicate-id")
        public static let initFailed = Code("init-failed")
        public static let activateFailed = Code("activate-failed")
        public static let providerTypeMismatch = Code("provider-type-mismatch")
        public static let missingProvider = Code("missing-provider")
        public static let disabled = Code("disabled")
        public static let verificationCrashed = Code("verify-crashed")
        public static let reloadIDMismatch = Code("reload-id-mismatch")
        public static let notLoaded = Code("not-loaded")
        public static let scannerUnavailable = Code("scanner-unavailable")
        public static let notLocked = Code("not-locked")
        public static let lockMismatch = Code("lock-hash-mismatch")
        public static let lockFileInvalid = Code("lock-file-invalid")
        public static let lockIDMismatch = Code("lock-id-mismatch")
        /// Signatures are required (or trusted keys given) and the lock file has no signature.
        public static let signatureMissing = Code("signature-missing")
        /// The lock file's signature, or its trusted comment's, does not verify.
        public static let signatureInvalid = Code("signature-invalid")
        /// The lock file was signed with a key the host does not trust.
        public static let keyUnknown = Code("key-unknown")
        /// The signed lock file's expiry has passed.
        public static let lockExpired = Code("lock-expired")
        /// The signed lock file's sequence number is lower than one the host accepted before.
        public static let lockRollback = Code("lock-rollback")
        /// Signatures required, no record of an accepted sequence, and no floor set.
        public static let lockSequenceUnknown = Code("lock-sequence-unknown")
        /// Signatures required, and the record of the accepted sequence cannot be read.
        public static let lockStateUnreadable = Code("lock-state-unreadable")
        /// The signed lock file names another channel than the host follows.
        public static let lockChannel = Code("lock-channel")
        public static let copyFailed = Code("copy-failed")
        public static let unsafeLibraryPath = Code("unsafe-library-path")
        public static let unsafeOwner = Code("unsafe-owner")
        public static let unsafePermissions = Code("unsafe-permissions")
        public static let untrustedSymlink = Code("untrusted-symlink")
        /// Isolation asked for, but a point the plugin provides cannot cross a process.
        public static let isolationUnsupportedPoint = Code("isolation-unsupported-point")
        /// Isolation asked for, but a service the plugin uses cannot cross a process yet.
        public static let isolationUnsupportedService = Code("isolation-unsupported-service")
        /// The program of isolated plugins' children (`plugboard-child`) is not where the host looks.
        public static let isolationChildMissing = Code("isolation-child-missing")
        /// A requirement's version range is not one of the forms the SDK documents.
        public static let dependencyRangeInvalid = Code("dependency-range-invalid")
        /// A required plugin is not installed.
        public static let dependencyMissing = Code("dependency-missing")
        /// A required plugin's version is outside the range.
        public static let dependencyVersion = Code("dependency-version")
        /// Plugins that require one another in a cycle: each is refused.
        public static let dependencyCycle = Code("dependency-cycle")
        /// A required plugin is rejected or failed.
        public static let dependencyRejected = Code("dependency-rejected")
        /// A required plugin is quarantined.
        public static let dependencyQuarantined = Code("dependency-quarantined")
        /// A required plugin is disabled.
        public static let dependencyDisabled = Code("dependency-disabled")
    }

    public let code: Code
    /// The file the error is about.
    public let path: String
    /// What is wrong and what to do, without the path (``message`` adds it).
    public let reason: String
    /// The status a plugin with this error gets.
    public let status: PluginStatus
    /// Why it is quarantined, for ``PluginStatus/quarantined``.
    public let quarantine: Quarantine?
    /// The system call that failed, with its `errno`, when the error comes from one.
    public package(set) var systemCall: SystemCallFailure?

    /// A failed system call: its name and `errno`.
    public struct SystemCallFailure: Sendable, Equatable, CustomStringConvertible {
        /// Such as `open`, `pread`, `fstat`.
        public let call: String
        public let errno: Int32
        public var description: String { "\(call): \(String(cString: strerror(errno)))" }
    }

    package init(code: Code, path: String, reason: String, status: PluginStatus = .rejected, quarantine: Quarantine? = nil) {
        self.code = code
        self.path = path
        self.reason = reason
        self.status = status
        self.quarantine = quarantine
    }

    /// The full human message: file, then reason.
    public var message: String { "\(path): \(reason)" }
    public var description: String { message }

    /// `call` failed with `errno` on the file.
    package static func unreadable(path: String, call: String, errno: Int32) -> PluginLoadError {
        var error = unreadable(path: path, reason: String(cString: strerror(errno)))
        error.systemCall = SystemCallFailure(call: call, errno: errno)
        return error
    }

    package static func unreadable(path: String, reason: String) -> PluginLoadError {
        PluginLoadError(code: .unreadable, path: path, reason: "cannot read the file (\(reason)); check that it exists and its permissions allow reading")
    }

    package static func notAFile(path: String, kind: String) -> PluginLoadError {
        PluginLoadError(code: .notAFile, path: path, reason: "is a \(kind), not a plugin file; plugins are .so files built by `swift build` from a package with a .dynamic library product")
    }

    package static func emptyFile(path: String) -> PluginLoadError {
        PluginLoadError(code: .emptyFile, path: path, reason: "the file is empty; rebuild the plugin or remove the file")
    }

    package static func notELF(path: String) -> PluginLoadError {
        PluginLoadError(code: .notELF, path: path, reason: "not an ELF shared object (no ELF magic); only .so files built by SwiftPM can be loaded")
    }

    package static func wrongArchitecture(path: String, found: String, expected: String) -> PluginLoadError {
        PluginLoadError(code: .wrongArchitecture, path: path, reason: "built for \(found), this host runs on \(expected); rebuild the plugin on/for \(expected)")
    }

    package static func notSharedObject(path: String, elfType: UInt16) -> PluginLoadError {
        PluginLoadError(code: .notSharedObject, path: path, reason: "an ELF file of type \(elfType), not a shared object; build the plugin as `.library(type: .dynamic)`")
    }

    package static func malformed(path: String, detail: String) -> PluginLoadError {
        PluginLoadError(code: .malformed, path: path, reason: "a damaged ELF file (\(detail)); the copy is probably truncated: rebuild or copy it again")
    }

    package static func noEntrySymbol(path: String) -> PluginLoadError {
        PluginLoadError(code: .noEntrySymbol, path: path, reason: "no `plugboard_entry` symbol: this library is not a Plugboard plugin; export the entry point with `@_cdecl(\"plugboard_entry\")` as the plugin guide shows")
    }

    package static func entryNotFunction(path: String, detail: String) -> PluginLoadError {
        PluginLoadError(code: .entryNotFunction, path: path, reason: "`plugboard_entry` is not code (\(detail)); export it with `@_cdecl(\"plugboard_entry\")` on a function returning `PluginExport.descriptor(...)`")
    }

    package static func notSwiftPlugin(path: String) -> PluginLoadError {
        PluginLoadError(code: .notSwiftPlugin, path: path, reason: "has no Swift type metadata, so it was not built from a Swift plugin package; build the plugin with SwiftPM from Swift sources that depend on the Plugboard SDK")
    }

    package static func noSDKMarker(path: String) -> PluginLoadError {
        PluginLoadError(code: .noSDKMarker, path: path, reason: "does not reference the SDK's ABI marker (plugboard_sdk_abi_*), so it was not built against the Plugboard SDK; depend on `.product(name: \"Plugboard\", package: \"SDK\")` and return `PluginExport.descriptor(...)` from `plugboard_entry`")
    }

    package static func notLocked(path: String, lockFile: String) -> PluginLoadError {
        PluginLoadError(code: .notLocked, path: path, reason: "not in the lock file \(lockFile), so it is not loaded; review it and run `plugboard lock` again (with `--sign KEYFILE` for hosts that require signatures, or install the publisher's signed set), or remove it")
    }

    package static func lockMismatch(path: String, expected: String, found: String, lockFile: String) -> PluginLoadError {
        PluginLoadError(code: .lockMismatch, path: path, reason: "its SHA-256 is \(found), the lock file \(lockFile) expects \(expected): the file changed since it was locked; review it and run `plugboard lock` again (with `--sign KEYFILE` for hosts that require signatures, or install the publisher's signed set), or restore the locked file")
    }

    package static func unsafeLibraryPath(path: String, detail: String) -> PluginLoadError {
        PluginLoadError(code: .unsafeLibraryPath, path: path, reason: "\(detail): the dynamic loader would look for a library outside the folder of the checked copy, where another user may put one; link the plugin as SwiftPM does (needed libraries by name, run path $ORIGIN and the toolchain's folder), and put the libraries it needs in the plugins directory's lib/ folder")
    }

    package static func copyFailed(path: String, reason: String) -> PluginLoadError {
        PluginLoadError(code: .copyFailed, path: path, reason: "cannot make the private copy it would be loaded from (\(reason)); check that the images directory (PluginHost.Configuration.paths.images) can be written and is safe")
    }

    package static func lockIDMismatch(path: String, found: String, recorded: String, lockFile: String) -> PluginLoadError {
        PluginLoadError(code: .lockIDMismatch, path: path, reason: "is plugin \(found), the lock file \(lockFile) records \(recorded) for this file: it is not the plugin that was locked; review it and run `plugboard lock` again, or restore the locked file")
    }

    package static func signature(_ code: Code, path: String, reason: String) -> PluginLoadError {
        PluginLoadError(code: code, path: path, reason: reason)
    }

    package static func lockFileInvalid(path: String, reason: String) -> PluginLoadError {
        PluginLoadError(code: .lockFileInvalid, path: path, reason: reason)
    }

    package static func fileChanged(path: String, detail: String) -> PluginLoadError {
        PluginLoadError(code: .fileChanged, path: path, reason: "changed while Plugboard was reading it (\(detail)); install plugins by copying to a temporary name in the same directory and renaming it into place (`cp lib.so DIR/.lib.so.tmp && mv DIR/.lib.so.tmp DIR/lib.so`), then start the host again (a changed file is examined again)")
    }

    package static func toolchainMismatch(path: String, plugin: String, host: String) -> PluginLoadError {
        PluginLoadError(code: .toolchainMismatch, path: path, reason: "built with another Swift toolchain (plugin: \(plugin); host: \(host)); Swift has no stable ABI on Linux, rebuild the plugin with the host's toolchain")
    }

    package static func sdkEmbedded(path: String) -> PluginLoadError {
        PluginLoadError(code: .sdkEmbedded, path: path, reason: "contains its own copy of the Plugboard SDK; depend on the SDK's product `.product(name: \"Plugboard\", package: \"SDK\")` (a dynamic library) instead of copying or statically linking its sources")
    }

    package static func sdkABIMismatch(path: String, plugin: ABIVersion, host: ABIVersion) -> PluginLoadError {
        PluginLoadError(code: .sdkABIMismatch, path: path, reason: "compiled against SDK ABI \(plugin), the host has SDK ABI \(host); majors must be equal: rebuild the plugin against the host's SDK")
    }

    package static func sdkTooNew(path: String, plugin: ABIVersion, host: ABIVersion) -> PluginLoadError {
        PluginLoadError(code: .sdkTooNew, path: path, reason: "compiled against SDK ABI \(plugin), newer than the host's SDK ABI \(host); rebuild the plugin against the host's SDK or upgrade the host")
    }

    package static func missingSDKSymbols(path: String, symbols: [String], pluginSDK: String, hostSDK: String) -> PluginLoadError {
        PluginLoadError(code: .missingSDKSymbols, path: path, reason: "uses SDK API the host's SDK lacks: \(symbols.joined(separator: "; ")) (plugin built against SDK \(pluginSDK), host has SDK \(hostSDK)); rebuild the plugin against the host's SDK or upgrade the host")
    }

    static func duplicateFile(path: String, original: String) -> PluginLoadError {
        PluginLoadError(code: .duplicateFile, path: path, reason: "is the same file as \(original) (symlinks are followed); remove one of them")
    }

    package static func nullDescriptor(path: String) -> PluginLoadError {
        PluginLoadError(code: .nullDescriptor, path: path, reason: "`plugboard_entry` returned a null descriptor; return `PluginExport.descriptor(...)` from it")
    }

    package static func badMagic(path: String, found: UInt32) -> PluginLoadError {
        PluginLoadError(code: .badMagic, path: path, reason: "the descriptor has magic 0x\(String(found, radix: 16)), expected 0x\(String(PLUGBOARD_DESCRIPTOR_MAGIC, radix: 16)); `plugboard_entry` must return `PluginExport.descriptor(...)`")
    }

    package static func unsupportedLayout(path: String, found: UInt32, expected: UInt32) -> PluginLoadError {
        PluginLoadError(code: .unsupportedLayout, path: path, reason: "descriptor layout \(found), this host reads layout \(expected); rebuild the plugin against the host's SDK")
    }

    package static func invalidDescriptor(path: String, detail: String) -> PluginLoadError {
        PluginLoadError(code: .invalidDescriptor, path: path, reason: "invalid descriptor: \(detail)")
    }

    package static func invalidID(path: String, field: String, value: String) -> PluginLoadError {
        PluginLoadError(code: .invalidID, path: path, reason: "\(field) '\(TerminalText.escaped(value, limit: TerminalText.nameLimit))' is not reverse-DNS (like com.example.tool: ASCII letters, digits, '-', '_', at least two dot-separated parts, at most 200 bytes); fix the id in the plugin's `PluginExport.descriptor(...)` call")
    }

    package static func invalidService(path: String, value: String) -> PluginLoadError {
        PluginLoadError(code: .invalidService, path: path, reason: "asks for service '\(TerminalText.escaped(value, limit: TerminalText.nameLimit))', which is not a reverse-DNS service id (like plugboard.storage); ask for services by their `Services` type")
    }

    package static func invalidTrigger(path: String, value: String) -> PluginLoadError {
        PluginLoadError(code: .invalidTrigger, path: path, reason: "activation trigger '\(TerminalText.escaped(value, limit: TerminalText.nameLimit))' is not startup, event:NAME or command:NAME (ASCII letters, digits, '.', '-', '_') or route:/PREFIX (URL path characters), at most 200 bytes; fix it in the plugin's `activation:` list")
    }

    package static func invalidNeed(path: String, value: String) -> PluginLoadError {
        PluginLoadError(code: .invalidNeed, path: path, reason: "sandbox need '\(TerminalText.escaped(value, limit: TerminalText.nameLimit))' is not tcp-connect:PORT, tcp-bind:PORT (1-65535), network or read:/ABSOLUTE/PATH; fix it in the plugin's `needs:` list (SandboxNeed)")
    }

    package static func sandboxNeedNotGranted(path: String, id: String, needs: [DeclaredNeed]) -> PluginLoadError {
        let spelled = needs.map(\.grantSpelling).joined(separator: ", ")
        return PluginLoadError(code: .sandboxNeedNotGranted, path: path,
            reason: "plugin \(id) runs sandboxed and needs what the host does not grant (\(spelled)); nothing of it ran. Grant it in the plugin's PluginSandbox (\(spelled)) if you trust it with that, or run it unsandboxed",
            status: .failed)
    }

    package static func sdkDuplicated(path: String, pluginSDK: String, hostSDK: String) -> PluginLoadError {
        PluginLoadError(code: .sdkDuplicated, path: path, reason: "binds to a second copy of the SDK (plugin uses \(pluginSDK), host uses \(hostSDK)); the process must hold one copy: the host must depend on `.product(name: \"Plugboard\", package: \"SDK\")` in every target of its Package.swift (never an SDK target), and the plugin must link that product dynamically")
    }

    package static func interfaceVersion(path: String, interface: String, provided: SemanticVersion, host: SemanticVersion) -> PluginLoadError {
        PluginLoadError(code: .interfaceVersion, path: path, reason: "provides \(interface) \(provided), the host offers \(interface) \(host); accepted are equal majors with a minor <= the host's (0.x: equal minors); rebuild the plugin against the host's interface")
    }

    package static func duplicateID(path: String, id: String, kept: String) -> PluginLoadError {
        PluginLoadError(code: .duplicateID, path: path, reason: "plugin id \(id) is also provided by \(kept), which was kept (higher version, or first by path); remove one of them")
    }

    package static func initFailed(path: String, id: String, error: String) -> PluginLoadError {
        PluginLoadError(code: .initFailed, path: path, reason: "plugin \(id) threw while being created: \(error)", status: .failed)
    }

    package static func activateFailed(path: String, id: String, error: String) -> PluginLoadError {
        PluginLoadError(code: .activateFailed, path: path, reason: "plugin \(id) threw while activating: \(error)", status: .failed)
    }

    package static func providerTypeMismatch(path: String, id: String, interface: String, expected: String, found: String) -> PluginLoadError {
        PluginLoadError(code: .providerTypeMismatch, path: path, reason: "plugin \(id) gave a \(found) for \(interface), the host expects \(expected)", status: .failed)
    }

    package static func missingProvider(path: String, id: String, interface: String) -> PluginLoadError {
        PluginLoadError(code: .missingProvider, path: path, reason: "plugin \(id) declares \(interface) in `provides:` but `contributions()` has no provider for it", status: .failed)
    }

    package static func disabled(path: String, id: String, source: String) -> PluginLoadError {
        PluginLoadError(code: .disabled, path: path, reason: "plugin \(id) is disabled by \(source)", status: .disabled)
    }

    package static func verificationCrashed(path: String, detail: String) -> PluginLoadError {
        PluginLoadError(code: .verificationCrashed, path: path, reason: "the new build \(detail), in the scanner process that verified it; the running version was kept: fix the build and save again")
    }

    package static func reloadIDMismatch(path: String, expected: String, found: String) -> PluginLoadError {
        PluginLoadError(code: .reloadIDMismatch, path: path, reason: "is plugin \(found), not \(expected); a reload must keep the plugin id")
    }

    package static func notLoaded(path: String, id: String) -> PluginLoadError {
        PluginLoadError(code: .notLoaded, path: path, reason: "plugin \(id) is not active in this host; load it before reloading it")
    }

    /// An isolated plugin's child could not be started: `code` is the
    /// ``IsolatedCallError/Code`` (`plugin-crashed`, `plugin-timeout`, ...).
    package static func isolationFailed(path: String, code: IsolatedCallError.Code, reason: String) -> PluginLoadError {
        PluginLoadError(code: Code(code.rawValue), path: path, reason: reason, status: .failed)
    }

    package static func isolationUnsupportedPoint(path: String, id: String, interface: String, providerType: String) -> PluginLoadError {
        PluginLoadError(code: .isolationUnsupportedPoint, path: path,
            reason: "plugin \(id) cannot be isolated: it provides \(interface), whose point (providers of type \(providerType)) does not conform to IsolatableExtensionPoint, so its requirements cannot cross a process; run it in process, or give the point profile(of:), proxy(_:profile:) and serve(_:on:) (docs/isolation.md)",
            status: .failed)
    }

    package static func isolationChildMissing(path: String, id: String, reason: String) -> PluginLoadError {
        PluginLoadError(code: .isolationChildMissing, path: path, reason: "plugin \(id) cannot start isolated: \(reason)", status: .failed)
    }

    package static func isolationUnsupportedService(path: String, id: String, service: String) -> PluginLoadError {
        PluginLoadError(code: .isolationUnsupportedService, path: path,
            reason: "plugin \(id) cannot be isolated: it uses service '\(service)', which cannot cross a process yet (isolated plugins get plugboard.logging, plugboard.configuration, plugboard.storage and plugboard.events); run it in process, or deny it the service in the host's settings",
            status: .failed)
    }

    package static func dependencyRangeInvalid(path: String, id: String, required: String, range: String) -> PluginLoadError {
        PluginLoadError(code: .dependencyRangeInvalid, path: path,
            reason: "plugin \(id) requires \(required) with range '\(TerminalText.escaped(range, limit: TerminalText.nameLimit))', which is not a range; write \"1.2.0\" (from 1.2.0 within major 1), \"=1.2.3\", \">=1.2.0 <3.0.0\" or \"~1.2\"")
    }

    package static func dependency(_ code: Code, path: String, id: String, reason: String) -> PluginLoadError {
        PluginLoadError(code: code, path: path, reason: "plugin \(id) \(reason)")
    }

    package static func dependencyVersion(path: String, id: String, requirement: PluginDependency, found: SemanticVersion) -> PluginLoadError {
        .dependency(.dependencyVersion, path: path, id: id,
            reason: "requires \(requirement.id) \(requirement.range), found \(found); install a version of \(requirement.id) in that range, or update \(id)")
    }

    package static func quarantined(path: String, quarantine: Quarantine) -> PluginLoadError {
        PluginLoadError(code: quarantine.code, path: path, reason: quarantine.reason, status: .quarantined, quarantine: quarantine)
    }

    package static func scannerUnavailable(path: String, detail: String) -> PluginLoadError {
        PluginLoadError(code: .scannerUnavailable, path: path, reason: "not scanned, so not loaded: the scanner process could not run (\(detail)); a host executable must link PlugboardHost (its scanner hook runs before main), or set `PluginHost.Configuration.scanner` to an executable that does, such as `plugboard`")
    }

    package static func reported(path: String, code: String, reason: String) -> PluginLoadError {
        PluginLoadError(code: Code(code), path: path, reason: reason)
    }
}
