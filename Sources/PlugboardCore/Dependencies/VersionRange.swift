import Plugboard

/// The versions a requirement accepts, parsed from the range a plugin's
/// descriptor spells (see the SDK's `PluginRequirement`):
///
/// | range | accepts |
/// |---|---|
/// | `1.2.0` (or `1.2`) | from 1.2.0 within major 1 (SwiftPM's `from:`); for `0.y`, within minor `0.y` |
/// | `=1.2.3` | 1.2.3 only |
/// | `>=1.2.0 <3.0.0` | from the first, below the second (either bound alone too) |
/// | `~1.2` or `~1.2.3` | within minor 1.2, from 1.2.0 or 1.2.3 |
///
/// Plugin versions have no pre-release part (`MAJOR.MINOR.PATCH` only), so
/// a range never matches one by accident.
package struct VersionRange: Sendable, Hashable, CustomStringConvertible {
    /// Lowest accepted version.
    package let lower: SemanticVersion
    /// The first version above the range (nil: no upper bound).
    package let upperBound: SemanticVersion?
    /// As written.
    package let text: String

    package var description: String { text }

    /// Whether `version` is in the range.
    package func contains(_ version: SemanticVersion) -> Bool {
        version >= lower && upperBound.map { version < $0 } != false
    }

    /// Parses `text`; nil when it is not one of the forms above.
    package init?(_ text: String) {
        self.text = text
        let trimmed = text.first == " " || text.last == " " ? text.trimmingCharacters(in: " ") : text
        if trimmed.hasPrefix("=") && !trimmed.hasPrefix("=>") {
            guard let exact = SemanticVersion(String(trimmed.dropFirst())) else { return nil }
            lower = exact
            upperBound = SemanticVersion(exact.major, exact.minor, exact.patch + 1)
        } else if trimmed.hasPrefix("~") {
            guard let base = SemanticVersion(String(trimmed.dropFirst())) else { return nil }
            lower = base
            upperBound = SemanticVersion(base.major, base.minor + 1, 0)
        } else if trimmed.hasPrefix(">=") || trimmed.hasPrefix("<") {
            var low = SemanticVersion(0, 0, 0)
            var high: SemanticVersion?
            var seenLow = false
            for part in trimmed.split(separator: " ") {
                if part.hasPrefix(">="), !seenLow, let version = SemanticVersion(String(part.dropFirst(2))) {
                    low = version
                    seenLow = true
                } else if part.hasPrefix("<"), !part.hasPrefix("<="), high == nil, let version = SemanticVersion(String(part.dropFirst())) {
                    high = version
                } else {
                    return nil
                }
            }
            if let high, high <= low { return nil }
            lower = low
            upperBound = high
        } else {
            guard let base = SemanticVersion(trimmed) else { return nil }
            lower = base
            upperBound = base.major == 0 ? SemanticVersion(0, base.minor + 1, 0) : SemanticVersion(base.major + 1, 0, 0)
        }
    }
}

extension String {
    fileprivate func trimmingCharacters(in character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}
