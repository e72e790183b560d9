import PlugboardCore

/// What a scan learned about a compatible plugin file: its descriptor, read
/// in the scanner process, so the host knows it without running its code.
/// Cached on disk with the file's identity.
package struct ScannedPlugin: Sendable, Codable, Equatable {
    package struct Provided: Sendable, Codable, Equatable {
        package let interface: String
        package let version: String

        package init(interface: String, version: String) {
            self.interface = interface
            self.version = version
        }
    }

    package let id: String
    package let version: String
    package let provides: [Provided]
    package let services: [String]
    package let sdkABI: String
    package let sdkVersion: String
    package let toolchain: String
    /// Activation triggers as the descriptor spells them (see ``ActivationTrigger``).
    package let activation: [String]
    /// The plugins it builds on (nil in cache entries written before they were read).
    package let requires: [PluginDependency]?
    /// What it needs when sandboxed, as ``SandboxNeed`` spells it (SDK 2.3).
    package let needs: [String]

    package var dependencies: [PluginDependency] { requires ?? [] }

    package init(
        id: String, version: String, provides: [Provided], services: [String], sdkABI: String, sdkVersion: String,
        toolchain: String, activation: [String], requires: [PluginDependency]?, needs: [String] = []
    ) {
        self.id = id
        self.version = version
        self.provides = provides
        self.services = services
        self.sdkABI = sdkABI
        self.sdkVersion = sdkVersion
        self.toolchain = toolchain
        self.activation = activation
        self.requires = requires
        self.needs = needs
    }

    package init(_ descriptor: Descriptor) {
        id = descriptor.id
        version = descriptor.version.description
        provides = descriptor.provides.map { Provided(interface: $0.id, version: $0.version.description) }
        services = descriptor.services
        sdkABI = descriptor.sdkABI.description
        sdkVersion = descriptor.sdkVersion
        toolchain = descriptor.toolchain
        activation = descriptor.activation
        requires = descriptor.requires
        needs = descriptor.needs
    }
}

extension ScannedPlugin {
    private enum CodingKeys: String, CodingKey {
        case id, version, provides, services, sdkABI, sdkVersion, toolchain, activation, requires, needs
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        version = try container.decode(String.self, forKey: .version)
        provides = try container.decode([Provided].self, forKey: .provides)
        services = try container.decode([String].self, forKey: .services)
        sdkABI = try container.decode(String.self, forKey: .sdkABI)
        sdkVersion = try container.decode(String.self, forKey: .sdkVersion)
        toolchain = try container.decode(String.self, forKey: .toolchain)
        activation = try container.decode([String].self, forKey: .activation)
        requires = try container.decodeIfPresent([String].self, forKey: .requires)?.map { text in
            guard let requirement = Self.requirement(text) else {
                throw DecodingError.dataCorruptedError(forKey: .requires, in: container, debugDescription: "a requirement without a range")
            }
            return requirement
        }
        needs = try container.decodeIfPresent([String].self, forKey: .needs) ?? []
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(version, forKey: .version)
        try container.encode(provides, forKey: .provides)
        try container.encode(services, forKey: .services)
        try container.encode(sdkABI, forKey: .sdkABI)
        try container.encode(sdkVersion, forKey: .sdkVersion)
        try container.encode(toolchain, forKey: .toolchain)
        try container.encode(activation, forKey: .activation)
        try container.encodeIfPresent(requires?.map(Self.requirementText), forKey: .requires)
        if !needs.isEmpty { try container.encode(needs, forKey: .needs) }
    }

    // Requirements are kept as one string each ("?" first when optional,
    // then the id, a space, the range), in the scanner's message and in a
    // cache entry: a keyed container per requirement cost more than the rest.
    package static func requirementText(_ dependency: PluginDependency) -> String {
        "\(dependency.optional ? "?" : "")\(dependency.id) \(dependency.range)"
    }

    /// The requirement `text` spells; nil without a range.
    package static func requirement(_ text: String) -> PluginDependency? {
        guard let space = text.firstIndex(of: " ") else { return nil }
        let optional = text.hasPrefix("?")
        return PluginDependency(
            id: String(text[text.index(text.startIndex, offsetBy: optional ? 1 : 0)..<space]),
            range: String(text[text.index(after: space)...]), optional: optional)
    }
}
