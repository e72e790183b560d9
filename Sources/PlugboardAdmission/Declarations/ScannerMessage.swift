import PlugboardCore

/// The scanner protocol: one JSON object per line over the channel socket.
///
/// Host to child: ``ScanRequest``. Child to host: `hello` once it runs, then
/// per request a `phase` line before each phase starts (so a crash is
/// pinned to the phase that was running) and one `result` line.
package struct ScanRequest: Codable {
    package let request: Int
    /// The private copy to load.
    package let file: String
    /// CPU seconds this file may use (RLIMIT_CPU, on top of what was used).
    package let cpuSeconds: Int
    /// Set when the plugin must also be created and activated here (a hot
    /// reload's verification): a crash in its init or activate then costs
    /// this process, not the host.
    package var activation: ActivationCheck?

    package init(request: Int, file: String, cpuSeconds: Int, activation: ActivationCheck? = nil) {
        self.request = request
        self.file = file
        self.cpuSeconds = cpuSeconds
        self.activation = activation
    }

    package struct ActivationCheck: Codable, Sendable {
        /// Scratch storage for the throwaway instance.
        package let dataDirectory: String
        /// The host's settings file, for the plugin's configuration overrides.
        package let settingsFile: String?

        package init(dataDirectory: String, settingsFile: String?) {
            self.dataDirectory = dataDirectory
            self.settingsFile = settingsFile
        }
    }
}

package struct ScannerMessage: Codable {
    package enum Kind: String, Codable { case hello, phase, result }
    package static let protocolVersion = 1

    package var kind: Kind
    package var request: Int?
    package var protocolVersion: Int?
    package var phase: Quarantine.Phase?
    /// Set on a result for a compatible plugin.
    package var plugin: ScannedPlugin?
    /// Set on a result for a refused one.
    package var rejection: Rejection?
    /// Set on a hello: what the scanner's sandbox reached.
    package var sandbox: SandboxReport?

    package init(kind: Kind, request: Int? = nil, protocolVersion: Int? = nil, phase: Quarantine.Phase? = nil, plugin: ScannedPlugin? = nil, rejection: Rejection? = nil, sandbox: SandboxReport? = nil) {
        self.kind = kind
        self.request = request
        self.protocolVersion = protocolVersion
        self.phase = phase
        self.plugin = plugin
        self.rejection = rejection
        self.sandbox = sandbox
    }

    package struct Rejection: Codable {
        package let code: String
        package let reason: String

        package init(code: String, reason: String) {
            self.code = code
            self.reason = reason
        }
    }
}
