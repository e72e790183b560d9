import Plugboard

/// The JSON form of a record: the `plugins[]` entries of `plugboard list
/// --json` and the body of `plugboard inspect --json`. Keys are part of the
/// CLI contract: add, never rename.
extension PluginRecord: Encodable {
    private enum Key: String, CodingKey {
        case path, resolvedPath, status, id, version, provides, services, reason, code, warnings
        case generation, sdk, file, activation, quarantine, sha256, isolation, requires, needs
    }

    private struct Provided: Encodable {
        let interface: String
        let version: String
    }

    private struct SDK: Encodable {
        let abi: String?
        let version: String?
        let toolchain: String?
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(path, forKey: .path)
        try container.encodeIfPresent(resolvedPath, forKey: .resolvedPath)
        try container.encode(status.rawValue, forKey: .status)
        try container.encodeIfPresent(id, forKey: .id)
        try container.encodeIfPresent(version?.description, forKey: .version)
        if id != nil {
            try container.encode(provides.map { Provided(interface: $0.id, version: $0.version.description) }, forKey: .provides)
            try container.encode(services, forKey: .services)
            try container.encode(SDK(abi: sdkABI?.description, version: sdkVersion, toolchain: toolchain), forKey: .sdk)
            try container.encode(activation, forKey: .activation)
            try container.encode(requires, forKey: .requires)
            if !needs.isEmpty { try container.encode(needs, forKey: .needs) }
        }
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encodeIfPresent(code, forKey: .code)
        if !warnings.isEmpty { try container.encode(warnings, forKey: .warnings) }
        try container.encodeIfPresent(quarantine, forKey: .quarantine)
        try container.encodeIfPresent(generation, forKey: .generation)
        try container.encodeIfPresent(file, forKey: .file)
        try container.encodeIfPresent(sha256, forKey: .sha256)
        try container.encodeIfPresent(isolation, forKey: .isolation)
    }
}
