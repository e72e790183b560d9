/// What a scan learned about a compatible plugin file: its descriptor, read
/// in the scanner process, so the host knows it without running its code.
/// Cached on disk with the file's identity.
struct ScannedPlugin: Sendable, Codable, Equatable {
    struct Provided: Sendable, Codable, Equatable {
        let interface: String
        let version: String
    }

    let id: String
    let version: String
    let provides: [Provided]
    let services: [String]
    let sdkABI: String
    let sdkVersion: String
    let toolchain: String
    /// Activation triggers as the descriptor spells them (see ``ActivationTrigger``).
    let activation: [String]
    /// The plugins it builds on (nil in cache entries written before they were read).
    let requires: [PluginDependency]?

    var dependencies: [PluginDependency] { requires ?? [] }

    init(_ descriptor: Descriptor) {
        id = descriptor.id
        version = descriptor.version.description
        provides = descriptor.provides.map { Provided(interface: $0.id, version: $0.version.description) }
        services = descriptor.services
        sdkABI = descriptor.sdkABI.description
        sdkVersion = descriptor.sdkVersion
        toolchain = descriptor.toolchain
        activation = descriptor.activation
        requires = descriptor.requires
    }
}
