import PlugboardCore

/// What one reload attempt did.
public struct ReloadOutcome: Sendable {
    public enum Result: Sendable, Equatable {
        /// The new generation is live.
        case reloaded
        /// A check refused the new build before any of its code ran in the host
        /// (or it crashed in the child verifier). The old generation runs on.
        case rejected(PluginLoadError)
        /// The new generation's own code threw (init, activate, providers): it
        /// was discarded and the old generation, with its state, runs on.
        case rolledBack(PluginLoadError)
    }

    /// Milliseconds per phase.
    public struct Timings: Sendable, Equatable, Encodable {
        public package(set) var verify: Double = 0
        /// Of `verify`: the admission in the host (trust, one read, static
        /// checks, private copy) before the scanner is asked.
        public package(set) var verifyAdmission: Double = 0
        /// Of `verify`: from asking for a scanner to the request, waiting for
        /// one that is ready (the spare's start, when it was not done yet).
        public package(set) var verifyWait: Double = 0
        /// Of `verify`: from the request to the scanner's answer, its load
        /// (and, when asked, init and activate) of the build's copy.
        public package(set) var verifyInScanner: Double = 0
        public package(set) var load: Double = 0
        public package(set) var `switch`: Double = 0
    }

    public let pluginID: String
    public let result: Result
    /// The live generation after this attempt.
    public let generation: Int
    public let timings: Timings
    /// What happened to the plugin's state, if it opted in (`ReloadableState`).
    public let stateNote: String?
    /// Address space the new generation's image added, in bytes.
    public let addedMemory: Int
    /// What the reload planned for the plugins that build on this one
    /// (nil when the build was refused before a plan was made).
    public package(set) var plan: ReloadPlan? = nil
    /// What became of each dependent the plan stopped, in activation order.
    public package(set) var dependents: [Dependent] = []

    /// One dependent a reload stopped.
    public struct Dependent: Sendable, Equatable {
        public let pluginID: String
        /// Its live generation afterwards (unchanged when it stayed stopped).
        public let generation: Int
        /// What happened to its state (the SDK's `ReloadableState`), if it opted in.
        public let stateNote: String?
        /// Why it stayed stopped, if it did.
        public let error: PluginLoadError?
    }

    /// The error, when not reloaded.
    public var error: PluginLoadError? {
        switch result {
        case .reloaded: nil
        case let .rejected(error), let .rolledBack(error): error
        }
    }
}
