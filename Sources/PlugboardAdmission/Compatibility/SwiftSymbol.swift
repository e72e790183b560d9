#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

// The Swift runtime's demangler (exported by libswiftCore; stable C signature).
@_silgen_name("swift_demangle")
private func _swift_demangle(
    _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int,
    _ outputBuffer: UnsafeMutablePointer<CChar>?, _ outputBufferSize: UnsafeMutablePointer<Int>?,
    _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// Turns symbol names into something a person can read.
package enum SwiftSymbol {
    /// The demangled form of a Swift symbol; other names come back unchanged.
    package static func demangle(_ name: String) -> String {
        let result = name.withCString { _swift_demangle($0, strlen($0), nil, nil, 0) }
        guard let result else { return name }
        defer { free(result) }
        return String(cString: result)
    }

    /// Whether `name` is an SDK symbol: a Swift symbol of module `Plugboard`
    /// or a C symbol of the SDK.
    package static func isSDKSymbol(_ name: String) -> Bool {
        sdkPrefixes.contains { name.hasPrefix($0) }
    }

    /// How an SDK symbol's name starts.
    static let sdkPrefixes = ["$s9Plugboard", "plugboard_"]

    /// How an ABI marker's name starts.
    static let abiMarkerPrefix = "plugboard_sdk_abi_"

    /// The SDK ABI version an ABI marker symbol names (`plugboard_sdk_abi_1_2` is 1.2).
    static func abiMarkerVersion(_ name: String) -> ABIVersion? {
        guard name.hasPrefix(abiMarkerPrefix) else { return nil }
        let parts = name.dropFirst(abiMarkerPrefix.count).split(separator: "_")
        guard parts.count == 2, let major = UInt32(parts[0]), let minor = UInt32(parts[1]) else { return nil }
        return ABIVersion(major: major, minor: minor)
    }

    static func abiMarker(_ version: ABIVersion) -> String {
        "\(abiMarkerPrefix)\(version.major)_\(version.minor)"
    }
}
