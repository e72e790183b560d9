/// A plugin this plugin builds on, named in the `requires:` of
/// ``PluginExport/descriptor(for:id:version:provides:services:activation:requires:)``.
///
/// The host reads requirements without running the plugin, and activates
/// what a plugin requires before it (in dependency order). A required plugin
/// that is missing, of a version outside the range, or not usable keeps the
/// dependent out with a code that names it (`dependency-missing`,
/// `dependency-version`, ...); an optional one that is missing does not.
///
/// Ranges, as SwiftPM spells them:
/// - `"1.2.0"`: from 1.2.0, within major 1 (SwiftPM's `from:`), the usual choice;
/// - `"=1.2.3"`: exactly that version;
/// - `">=1.2.0 <3.0.0"`: a lower bound and an upper bound it is below;
/// - `"~1.2"` or `"~1.2.3"`: within minor 1.2 (from 1.2.0, or 1.2.3).
///
/// ```swift
/// requires: [.plugin("dev.plugboard.example.checkout", "1.0.0")]
/// ```
public struct PluginRequirement: Sendable, Hashable {
    /// The required plugin's id.
    public var id: String
    /// The versions it may have.
    public var range: String
    /// Whether this plugin runs without it (missing or unusable).
    public var optional: Bool

    /// A requirement of plugin `id` in `range`.
    public init(id: String, range: String, optional: Bool = false) {
        self.id = id
        self.range = range
        self.optional = optional
    }

    /// A requirement of plugin `id` in `range` (see the type's ranges).
    public static func plugin(_ id: String, _ range: String, optional: Bool = false) -> PluginRequirement {
        PluginRequirement(id: id, range: range, optional: optional)
    }
}
