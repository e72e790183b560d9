import Plugboard

/// The rule for accepting a provider of an interface.
///
/// - `1.x` and up: equal majors, and the provider's minor no greater than the
///   host's. A provider built against 1.1 works in a host offering 1.2 (minors
///   only add); one built against 1.3 may call what 1.2 lacks; 2.0 broke 1.x.
/// - `0.x`: unstable; equal majors *and* equal minors (0.2 accepts only 0.2.x).
/// - Patch versions never matter.
package enum InterfaceCompatibility {
    /// Whether a provider built against `provided` is accepted by a host offering `host`.
    package static func accepts(host: SemanticVersion, provided: SemanticVersion) -> Bool {
        guard host.major == provided.major else { return false }
        if host.major == 0 { return host.minor == provided.minor }
        return provided.minor <= host.minor
    }
}
