import PlugboardHost

/// The host side, as the tool reports it.
enum HostFacts {
    /// The SDK this tool was built with: read from the process, not from a
    /// host made for it (a host makes its state directory, on every run).
    static var sdkLabel: String {
        let environment = HostEnvironment.current
        return "\(environment.sdkVersion), ABI \(environment.sdkABI)"
    }
}
