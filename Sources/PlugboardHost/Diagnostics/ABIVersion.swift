/// An SDK ABI version: `MAJOR.MINOR`, compared by the rule in the README
/// ("Compatibility rules"): equal majors, plugin minor <= host minor.
public struct ABIVersion: Sendable, Hashable, Encodable, CustomStringConvertible {
    public var major: UInt32
    public var minor: UInt32

    public init(major: UInt32, minor: UInt32) {
        self.major = major
        self.minor = minor
    }

    public var description: String { "\(major).\(minor)" }

    /// Encoded as `"MAJOR.MINOR"`, like every version in the CLI's JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
