import PlugboardHost

/// The host side, as the tool reports it.
enum HostFacts {
    static var sdkLabel: String {
        let host = PluginHost()
        return "\(host.sdkVersion), ABI \(host.sdkABI)"
    }
}
