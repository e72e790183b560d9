/// An SDK ABI version: `MAJOR.MINOR`, compared by the rule of
/// docs/compatibility.md, "Interface versions": equal majors, plugin minor <= host minor.
public struct ABIVersion: Sendable, Hashable, Codable, CustomStringConvertible {
    public var major: UInt32
    public var minor: UInt32

    public init(major: UInt32, minor: UInt32) {
        self.major = major
        self.minor = minor
    }

    public var description: String { "\(major).\(minor)" }

    /// Parses `"MAJOR.MINOR"`.
    public init?(_ text: String) {
        // Found on the bytes, not split: a warm start parses one per installed
        // plugin. Digits and one dot only (no sign); a second dot leaves the
        // minor unparsable.
        guard text.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let dot = text.utf8.firstIndex(of: UInt8(ascii: ".")),
              let major = UInt32(text[..<dot]), let minor = UInt32(text[text.utf8.index(after: dot)...]) else { return nil }
        self.init(major: major, minor: minor)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let version = ABIVersion(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not MAJOR.MINOR: \(text)"))
        }
        self = version
    }

    /// Encoded as `"MAJOR.MINOR"`, like every version in the CLI's JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
