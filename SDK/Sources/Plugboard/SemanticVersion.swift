/// A semantic version: `MAJOR.MINOR.PATCH`.
///
/// Plugboard uses versions for plugins, for interfaces (extension points) and
/// for the SDK itself. Pre-release and build suffixes are not part of the
/// contract and are rejected by ``init(_:)``.
///
/// ```swift
/// let version = SemanticVersion(1, 2)          // 1.2.0
/// let parsed = SemanticVersion("1.2.3")        // Optional(1.2.3)
/// ```
public struct SemanticVersion: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// Incompatible changes.
    public var major: Int
    /// Additions that keep compatibility.
    public var minor: Int
    /// Fixes.
    public var patch: Int

    /// Creates a version from its three numbers; negative numbers are clamped to 0.
    public init(_ major: Int, _ minor: Int, _ patch: Int = 0) {
        self.major = max(0, major)
        self.minor = max(0, minor)
        self.patch = max(0, patch)
    }

    /// Parses `MAJOR.MINOR` or `MAJOR.MINOR.PATCH`; returns `nil` for anything else.
    public init?(_ string: String) {
        // On the UTF-8 bytes: a host parses two versions per plugin on every start.
        var numbers = (0, 0, 0), count = 0, value = 0, digits = 0
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                // Digits only, at most 9 per part: "+1", " 1" and "1-beta" are not versions.
                guard digits < 9 else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
            case UInt8(ascii: "."):
                guard digits > 0, count < 2 else { return nil }
                if count == 0 { numbers.0 = value } else { numbers.1 = value }
                count += 1
                value = 0
                digits = 0
            default:
                return nil
            }
        }
        guard digits > 0, count >= 1 else { return nil }
        if count == 1 { numbers.1 = value } else { numbers.2 = value }
        self.init(numbers.0, numbers.1, numbers.2)
    }

    public var description: String { "\(major).\(minor).\(patch)" }

    public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let version = SemanticVersion(text) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath, debugDescription: "'\(text)' is not a semantic version"))
        }
        self = version
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
