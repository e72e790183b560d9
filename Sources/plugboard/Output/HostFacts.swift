import PlugboardHost

/// The host side, as the tool reports it.
enum HostFacts {
    static var sdkLabel: String {
        let host = PluginHost()
        return "\(host.baseline.sdkVersion), ABI \(host.baseline.sdkABI)"
    }
}
