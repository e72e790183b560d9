import PlugboardCore

/// What a reload of a plugin others build on will do, decided after its new
/// build was admitted and verified and before anything changes: which
/// dependents stop, in what order, which start again, and which stay
/// stopped because the new version is outside their range.
///
/// ``PluginHost/planReload(_:from:verification:)`` returns one without
/// acting (a dry run); ``PluginHost/reload(_:from:verification:beforeActing:)``
/// hands it over before it acts, and ``ReloadOutcome/plan`` keeps it.
public struct ReloadPlan: Sendable, Equatable {
    /// A dependent that will not start again.
    public struct Refusal: Sendable, Equatable {
        public let pluginID: String
        /// `dependency-version` (its range does not accept the new version)
        /// or `dependency-rejected` (something it requires is refused).
        public let error: PluginLoadError
    }

    /// The plugin to reload.
    public let pluginID: String
    /// The version running now.
    public let currentVersion: String
    /// The version of the new build; nil when it was refused.
    public let newVersion: String?
    /// Why the new build was refused, if it was: nothing would change.
    public let rejection: PluginLoadError?
    /// Active plugins that require it, directly or through each other,
    /// optionally or not: deactivated before the switch, in this order (the
    /// reverse of activation order).
    public let stops: [String]
    /// The dependents created and activated again after the switch, with
    /// their state, in this order (activation order).
    public let restarts: [String]
    /// The dependents that stay stopped.
    public let refusals: [Refusal]

    /// Whether the plan touches other plugins.
    public var cascades: Bool { !stops.isEmpty }

    /// One line per step, as `plugboard dev` prints it.
    public var steps: [String] {
        guard rejection == nil else { return ["refuse the build of \(pluginID): \(rejection!.message)"] }
        var steps = stops.map { "stop \($0)" }
        steps.append("switch \(pluginID) \(currentVersion) → \(newVersion ?? "?")")
        steps += restarts.map { "start \($0) again" }
        steps += refusals.map { "keep \($0.pluginID) stopped: \($0.error.code.rawValue)" }
        return steps
    }
}
