import CPlugboard
#if canImport(Glibc)
import Glibc
#endif

/// Builds the descriptor a plugin's entry point returns.
///
/// Every plugin exports exactly one C function, `plugboard_entry`, that returns
/// ``descriptor(for:id:version:provides:services:activation:)``:
///
/// ```swift
/// @_cdecl("plugboard_entry")
/// public func plugboardEntry() -> UnsafeRawPointer {
///     PluginExport.descriptor(
///         for: Greeter.self, id: "com.example.greeter", version: "1.0.0",
///         provides: [Commands.interface], services: [Services.Logging.id])
/// }
/// ```
///
/// The function is inlined into the plugin (`@_alwaysEmitIntoClient`), so the SDK
/// ABI version and the toolchain it records are those the *plugin* was compiled
/// with. It runs no code of the plugin author's: the host checks the descriptor
/// before it creates the plugin.
public enum PluginExport {
    /// The descriptor for `plugin`.
    ///
    /// - Parameters:
    ///   - plugin: the ``Plugin`` type the host instantiates.
    ///   - id: reverse-DNS plugin id, unique among the host's plugins: two or
    ///     more dot-separated parts of ASCII letters, digits, `-` and `_`, at
    ///     most 200 bytes (a host refuses any other with `invalid-id`).
    ///   - version: the plugin's semantic version, `MAJOR.MINOR.PATCH`.
    ///   - provides: the interfaces the plugin provides; use each extension
    ///     point's `interface` so its compiled version is recorded.
    ///   - services: ids of the host services the plugin needs
    ///     (``Services/Key/id``), reverse-DNS as `id` (a host refuses any
    ///     other with `invalid-service`).
    ///   - activation: when the host activates the plugin besides the first
    ///     lookup of an interface in `provides` (see ``ActivationTrigger``).
    /// - Returns: a pointer to a descriptor that lives as long as the process.
    @_alwaysEmitIntoClient
    public static func descriptor<P: Plugin>(
        for plugin: P.Type, id: String, version: String,
        provides: [Interface], services: [String] = [], activation: [ActivationTrigger] = []
    ) -> UnsafeRawPointer {
        descriptor(for: plugin, id: id, version: version, provides: provides, services: services, activation: activation, requires: [])
    }

    /// The descriptor for `plugin`, which builds on the plugins in `requires`
    /// (SDK 2.2): the host activates them first, and keeps this plugin out
    /// with a code naming the problem when one is missing, out of range or
    /// unusable (see ``PluginRequirement``). The other parameters are those
    /// of ``descriptor(for:id:version:provides:services:activation:)``.
    ///
    /// - Parameters:
    ///   - plugin: the ``Plugin`` type the host instantiates.
    ///   - id: reverse-DNS plugin id.
    ///   - version: the plugin's semantic version, `MAJOR.MINOR.PATCH`.
    ///   - provides: the interfaces the plugin provides.
    ///   - services: ids of the host services the plugin needs.
    ///   - activation: when the host activates the plugin (see ``ActivationTrigger``).
    ///   - requires: the plugins this one builds on, with version ranges.
    /// - Returns: a pointer to a descriptor that lives as long as the process.
    @_alwaysEmitIntoClient
    public static func descriptor<P: Plugin>(
        for plugin: P.Type, id: String, version: String,
        provides: [Interface], services: [String] = [], activation: [ActivationTrigger] = [],
        requires: [PluginRequirement]
    ) -> UnsafeRawPointer {
        descriptor(
            for: plugin, id: id, version: version, provides: provides, services: services, activation: activation,
            requires: requires, needs: [])
    }

    /// The descriptor for `plugin`, which declares what it `needs` beyond a
    /// sandbox's defaults (SDK 2.3; see ``SandboxNeed``). The other
    /// parameters are those of
    /// ``descriptor(for:id:version:provides:services:activation:requires:)``.
    ///
    /// - Parameters:
    ///   - plugin: the ``Plugin`` type the host instantiates.
    ///   - id: reverse-DNS plugin id.
    ///   - version: the plugin's semantic version, `MAJOR.MINOR.PATCH`.
    ///   - provides: the interfaces the plugin provides.
    ///   - services: ids of the host services the plugin needs.
    ///   - activation: when the host activates the plugin (see ``ActivationTrigger``).
    ///   - requires: the plugins this one builds on, with version ranges.
    ///   - needs: what it needs when the host runs it sandboxed.
    /// - Returns: a pointer to a descriptor that lives as long as the process.
    @_alwaysEmitIntoClient
    public static func descriptor<P: Plugin>(
        for plugin: P.Type, id: String, version: String,
        provides: [Interface], services: [String] = [], activation: [ActivationTrigger] = [],
        requires: [PluginRequirement] = [], needs: [SandboxNeed]
    ) -> UnsafeRawPointer {
        let interfaces = UnsafeMutablePointer<plugboard_interface>.allocate(capacity: max(1, provides.count))
        for (index, interface) in provides.enumerated() {
            (interfaces + index).initialize(to: plugboard_interface(
                id: UnsafePointer(strdup(interface.id)),
                major: UInt32(clamping: interface.version.major),
                minor: UInt32(clamping: interface.version.minor),
                patch: UInt32(clamping: interface.version.patch),
                reserved: 0))
        }
        let serviceIDs = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(1, services.count))
        for (index, service) in services.enumerated() {
            (serviceIDs + index).initialize(to: UnsafePointer(strdup(service)))
        }
        let triggers = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(1, activation.count))
        for (index, trigger) in activation.enumerated() {
            (triggers + index).initialize(to: UnsafePointer(strdup(trigger.encoded)))
        }
        let activationList = UnsafeMutablePointer<plugboard_activation>.allocate(capacity: 1)
        activationList.initialize(to: plugboard_activation(
            count: UInt32(clamping: activation.count), reserved: 0, triggers: UnsafePointer(triggers)))
        let requirements = UnsafeMutablePointer<plugboard_requirement>.allocate(capacity: max(1, requires.count))
        for (index, requirement) in requires.enumerated() {
            (requirements + index).initialize(to: plugboard_requirement(
                id: UnsafePointer(strdup(requirement.id)), range: UnsafePointer(strdup(requirement.range)),
                optional: requirement.optional ? 1 : 0, reserved: 0))
        }
        let requiresList = UnsafeMutablePointer<plugboard_requires>.allocate(capacity: 1)
        requiresList.initialize(to: plugboard_requires(
            count: UInt32(clamping: requires.count), reserved: 0, entries: UnsafePointer(requirements)))
        let needEntries = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(1, needs.count))
        for (index, need) in needs.enumerated() {
            (needEntries + index).initialize(to: UnsafePointer(strdup(need.encoded)))
        }
        let needsList = UnsafeMutablePointer<plugboard_needs>.allocate(capacity: 1)
        needsList.initialize(to: plugboard_needs(count: UInt32(clamping: needs.count), reserved: 0, entries: UnsafePointer(needEntries)))
        let factory = Factory(makePlugin: { context in try P(context: context) }, defaults: { P.defaultConfiguration })
        let descriptor = UnsafeMutablePointer<plugboard_descriptor>.allocate(capacity: 1)
        descriptor.initialize(to: plugboard_descriptor(
            magic: PLUGBOARD_DESCRIPTOR_MAGIC,
            layout_version: PLUGBOARD_DESCRIPTOR_LAYOUT,
            sdk_abi_major: PLUGBOARD_SDK_ABI_MAJOR,
            sdk_abi_minor: PLUGBOARD_SDK_ABI_MINOR,
            sdk_version: UnsafePointer(strdup(PLUGBOARD_SDK_VERSION)),
            toolchain: plugboard_compiler_fingerprint(),
            plugin_id: UnsafePointer(strdup(id)),
            plugin_version: UnsafePointer(strdup(version)),
            provides_count: UInt32(clamping: provides.count),
            services_count: UInt32(clamping: services.count),
            provides: UnsafePointer(interfaces),
            services: UnsafePointer(serviceIDs),
            factory: Unmanaged.passRetained(factory as AnyObject).toOpaque(),
            sdk_marker: plugboard_sdk_abi_marker(),
            activation: UnsafePointer(activationList),
            requires: UnsafePointer(requiresList),
            needs: UnsafePointer(needsList),
            reserved: (nil)))
        return UnsafeRawPointer(descriptor)
    }
}

extension PluginExport {
    /// Creates a plugin instance; handed to the host inside the descriptor.
    ///
    /// The host checks that this object's class is the one in its own copy of the
    /// SDK, which is how it detects a plugin that embeds a second SDK copy.
    public final class Factory: Sendable {
        @usableFromInline
        let makePlugin: @Sendable (PluginContext) throws -> any Plugin
        @usableFromInline
        let defaults: @Sendable () -> [String: ConfigValue]

        @usableFromInline
        init(
            makePlugin: @escaping @Sendable (PluginContext) throws -> any Plugin,
            defaults: @escaping @Sendable () -> [String: ConfigValue]
        ) {
            self.makePlugin = makePlugin
            self.defaults = defaults
        }

        /// The plugin type's configuration defaults. Host only.
        @_spi(PlugboardHost)
        public var defaultConfiguration: [String: ConfigValue] { defaults() }

        /// Creates the plugin instance. Host only.
        @_spi(PlugboardHost)
        public func make(context: PluginContext) throws -> any Plugin {
            try makePlugin(context)
        }
    }
}
