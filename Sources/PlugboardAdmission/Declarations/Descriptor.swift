import CPlugboard
import Plugboard
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// The host's checked copy of a plugin's `plugboard_descriptor`.
package struct Descriptor: Sendable {
    package static let magic: UInt32 = PLUGBOARD_DESCRIPTOR_MAGIC
    package static let layout: UInt32 = PLUGBOARD_DESCRIPTOR_LAYOUT
    /// Limits that keep a corrupt descriptor from making us read far.
    static let maxStringLength = 1024
    package static let maxInterfaces = 256

    let sdkABI: ABIVersion
    let sdkVersion: String
    let toolchain: String
    package let id: String
    package let version: SemanticVersion
    package let provides: [Interface]
    package let services: [String]
    /// Activation triggers: `startup`, `route:<prefix>`, `event:<name>`.
    let activation: [String]
    /// The plugins it builds on (SDK 2.2; none before).
    package let requires: [PluginDependency]
    /// What it needs when sandboxed, as ``SandboxNeed`` spells it (SDK 2.3; none before).
    let needs: [String]
    /// Bit patterns of the descriptor's pointers (raw pointers are not Sendable).
    package let factoryBits: UInt
    package let markerBits: UInt

    /// Reads and checks the descriptor `entry` returned, in contract order:
    /// magic and layout first (nothing else is read from a descriptor whose
    /// layout we do not know), then versions, then the fields.
    package static func read(
        _ raw: UnsafeRawPointer?, path: String, environment: HostEnvironment
    ) -> Result<Descriptor, PluginLoadError> {
        guard let raw else { return .failure(.nullDescriptor(path: path)) }
        let magic = raw.loadUnaligned(as: UInt32.self)
        guard magic == Self.magic else { return .failure(.badMagic(path: path, found: magic)) }
        let layout = raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
        guard layout == Self.layout else {
            return .failure(.unsupportedLayout(path: path, found: layout, expected: Self.layout))
        }
        let c = raw.assumingMemoryBound(to: plugboard_descriptor.self).pointee

        let abi = ABIVersion(major: c.sdk_abi_major, minor: c.sdk_abi_minor)
        let host = environment.sdkABI
        if abi.major != host.major { return .failure(.sdkABIMismatch(path: path, plugin: abi, host: host)) }
        if abi.minor > host.minor { return .failure(.sdkTooNew(path: path, plugin: abi, host: host)) }

        func text(_ pointer: UnsafePointer<CChar>?, _ field: String) -> Result<String, PluginLoadError> {
            guard let pointer else { return .failure(.invalidDescriptor(path: path, detail: "\(field) is null")) }
            let length = strnlen(pointer, maxStringLength + 1)
            guard length <= maxStringLength else {
                return .failure(.invalidDescriptor(path: path, detail: "\(field) is longer than \(maxStringLength) bytes"))
            }
            return .success(String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self))
        }

        do {
            let toolchain = try text(c.toolchain, "toolchain").get()
            if toolchain != environment.compiledToolchain {
                return .failure(.toolchainMismatch(path: path, plugin: toolchain, host: environment.compiledToolchain))
            }
            let sdkVersion = try text(c.sdk_version, "sdk_version").get()
            let id = try text(c.plugin_id, "plugin_id").get()
            guard isValidID(id) else { return .failure(.invalidID(path: path, field: "plugin id", value: id)) }
            let versionText = try text(c.plugin_version, "plugin_version").get()
            guard let version = SemanticVersion(versionText) else {
                return .failure(.invalidDescriptor(path: path, detail: "plugin version '\(TerminalText.escaped(versionText, limit: TerminalText.nameLimit))' is not MAJOR.MINOR.PATCH"))
            }
            guard Int(c.provides_count) <= maxInterfaces, Int(c.services_count) <= maxInterfaces else {
                return .failure(.invalidDescriptor(path: path, detail: "more than \(maxInterfaces) interfaces or services"))
            }
            var provides: [Interface] = []
            if c.provides_count > 0 {
                guard let list = c.provides else { return .failure(.invalidDescriptor(path: path, detail: "provides is null")) }
                for index in 0..<Int(c.provides_count) {
                    let entry = list[index]
                    let interfaceID = try text(entry.id, "provides[\(index)].id").get()
                    guard isValidID(interfaceID) else {
                        return .failure(.invalidID(path: path, field: "interface id", value: interfaceID))
                    }
                    provides.append(Interface(id: interfaceID, version: SemanticVersion(
                        Int(entry.major), Int(entry.minor), Int(entry.patch))))
                }
            }
            var services: [String] = []
            if c.services_count > 0 {
                guard let list = c.services else { return .failure(.invalidDescriptor(path: path, detail: "services is null")) }
                for index in 0..<Int(c.services_count) {
                    let service = try text(list[index], "services[\(index)]").get()
                    guard isValidID(service) else { return .failure(.invalidService(path: path, value: service)) }
                    services.append(service)
                }
            }
            var activation: [String] = []
            if let list = c.activation?.pointee, list.count > 0 {
                guard Int(list.count) <= maxInterfaces, let triggers = list.triggers else {
                    return .failure(.invalidDescriptor(path: path, detail: "activation list is null or longer than \(maxInterfaces)"))
                }
                for index in 0..<Int(list.count) {
                    let trigger = try text(triggers[index], "activation[\(index)]").get()
                    guard PluginTrigger(trigger) != nil else { return .failure(.invalidTrigger(path: path, value: trigger)) }
                    activation.append(trigger)
                }
            }
            var requires: [PluginDependency] = []
            if let list = c.requires?.pointee, list.count > 0 {
                guard Int(list.count) <= maxInterfaces, let entries = list.entries else {
                    return .failure(.invalidDescriptor(path: path, detail: "requires list is null or longer than \(maxInterfaces)"))
                }
                for index in 0..<Int(list.count) {
                    let required = try text(entries[index].id, "requires[\(index)].id").get()
                    guard isValidID(required) else { return .failure(.invalidID(path: path, field: "required plugin id", value: required)) }
                    let range = try text(entries[index].range, "requires[\(index)].range").get()
                    guard VersionRange(range) != nil else {
                        return .failure(.dependencyRangeInvalid(path: path, id: id, required: required, range: range))
                    }
                    requires.append(PluginDependency(id: required, range: range, optional: entries[index].optional != 0))
                }
            }
            var needs: [String] = []
            // The slot was reserved (null) before SDK 2.3: read only from plugins built against it.
            if abi.minor >= 3, let list = c.needs?.pointee, list.count > 0 {
                guard Int(list.count) <= maxInterfaces, let entries = list.entries else {
                    return .failure(.invalidDescriptor(path: path, detail: "needs list is null or longer than \(maxInterfaces)"))
                }
                for index in 0..<Int(list.count) {
                    let need = try text(entries[index], "needs[\(index)]").get()
                    guard DeclaredNeed(need) != nil else { return .failure(.invalidNeed(path: path, value: need)) }
                    needs.append(need)
                }
            }
            guard let factory = c.factory else { return .failure(.invalidDescriptor(path: path, detail: "factory is null")) }
            return .success(Descriptor(
                sdkABI: abi, sdkVersion: sdkVersion, toolchain: toolchain, id: id, version: version,
                provides: provides, services: services, activation: activation, requires: requires, needs: needs,
                factoryBits: UInt(bitPattern: factory), markerBits: UInt(bitPattern: c.sdk_marker)))
        } catch {
            return .failure(error)
        }
    }

    /// Reverse-DNS: two or more dot-separated labels of ASCII letters, digits, '-' and '_'.
    /// Checked on bytes: by `Character` (grapheme breaking) it cost 60,000
    /// instructions per activation.
    package static func isValidID(_ id: String) -> Bool {
        guard id.utf8.count <= 200 else { return false }
        var labels = 1, labelLength = 0
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "."):
                guard labelLength > 0 else { return false }
                labels += 1
                labelLength = 0
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"):
                labelLength += 1
            default:
                return false
            }
        }
        return labels >= 2 && labelLength > 0
    }
}
