/// The scanner protocol: one JSON object per line over the channel socket.
///
/// Host to child: ``ScanRequest``. Child to host: `hello` once it runs, then
/// per request a `phase` line before each phase starts (so a crash is
/// pinned to the phase that was running) and one `result` line.
struct ScanRequest: Codable {
    let request: Int
    /// The private copy to load.
    let file: String
    /// CPU seconds this file may use (RLIMIT_CPU, on top of what was used).
    let cpuSeconds: Int
    /// Set when the plugin must also be created and activated here (a hot
    /// reload's verification): a crash in its init or activate then costs
    /// this process, not the host.
    var activation: ActivationCheck?

    struct ActivationCheck: Codable, Sendable {
        /// Scratch storage for the throwaway instance.
        let dataDirectory: String
        /// The host's settings file, for the plugin's configuration overrides.
        let settingsFile: String?
    }
}

struct ScannerMessage: Codable {
    enum Kind: String, Codable { case hello, phase, result }
    static let protocolVersion = 1

    var kind: Kind
    var request: Int?
    var protocolVersion: Int?
    var phase: Quarantine.Phase?
    /// Set on a result for a compatible plugin.
    var plugin: ScannedPlugin?
    /// Set on a result for a refused one.
    var rejection: Rejection?
    /// Set on a hello: what the scanner's sandbox reached.
    var sandbox: SandboxReport?

    struct Rejection: Codable {
        let code: String
        let reason: String
    }
}
