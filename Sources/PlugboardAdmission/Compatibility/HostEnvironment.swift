import CPlugboard
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// What this host process is: the SDK it was built with, the SDK image it
/// runs with, and the Swift toolchain of its runtime. Plugins are compared
/// against these values.
package struct HostEnvironment: Sendable {
    /// SDK ABI the host was compiled against.
    package let sdkABI: ABIVersion
    /// SDK release version the host was compiled against.
    package let sdkVersion: String
    /// `__clang_version__` of the compiler that built the host.
    package let compiledToolchain: String
    /// The toolchain line of the loaded Swift runtime's `.comment`.
    package let runtimeToolchain: String?
    /// The SDK image (`libPlugboard.so`) this process uses.
    let sdkLibrary: DynamicLibrary?
    /// Set when the host carries its own static copy of the SDK (its SDK image
    /// is not `libPlugboard.so`): every plugin would bind to a second copy.
    let sdkEmbeddedIn: String?
    /// The file of the image holding the host's SDK (as dladdr names it).
    package let sdkImagePath: String?

    package static let current = HostEnvironment()

    private init() {
        sdkABI = ABIVersion(major: PLUGBOARD_SDK_ABI_MAJOR, minor: PLUGBOARD_SDK_ABI_MINOR)
        sdkVersion = PLUGBOARD_SDK_VERSION
        compiledToolchain = String(cString: plugboard_compiler_fingerprint())
        let marker = plugboard_sdk_abi_marker()
        let sdkImage = DynamicLibrary.imagePath(containing: marker)
        sdkImagePath = sdkImage
        sdkLibrary = sdkImage.flatMap(DynamicLibrary.alreadyLoaded)
        // SwiftPM sets no DT_SONAME; plugins record the file name in DT_NEEDED.
        let sdkFile = sdkImage.flatMap(PluginDirectory.realPath) ?? sdkImage
        let isSharedSDK = sdkFile.map { $0.split(separator: "/").last.map(String.init) == PluginDirectory.sdkSoname } ?? false
        sdkEmbeddedIn = isSharedSDK ? nil : (sdkFile ?? "the host executable")
        let runtime = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "swift_retain")
            .flatMap { DynamicLibrary.imagePath(containing: $0) }
        runtimeToolchain = runtime.flatMap { try? ELFImage.readMapped(path: $0, symbols: false).toolchainComment }
    }

    /// Human label for the SDK: "2.0.0 (ABI 2.0)".
    package var sdkLabel: String { "\(sdkVersion) (ABI \(sdkABI))" }

    /// Whether the host's SDK image defines `symbol`.
    func sdkDefines(_ symbol: String) -> Bool {
        sdkLibrary?.symbol(symbol) != nil
    }

    /// The file of the SDK image the host uses.
    package var sdkPath: String { sdkLibrary?.path ?? "(unknown)" }
}
