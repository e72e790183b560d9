import PlugboardCore

extension PluginHost {
    /// What every plugin is checked against: the SDK this host was built
    /// with and the toolchain of the Swift runtime it runs on.
    public struct Baseline: Sendable {
        /// The SDK release, such as `2.0.0`.
        public let sdkVersion: String
        /// The SDK ABI; a plugin's must have the same major and no greater minor.
        public let sdkABI: ABIVersion
        /// The Swift toolchain the host's runtime comes from; a plugin's must be the same.
        public let toolchain: String
    }

    /// What every plugin is checked against.
    public var baseline: Baseline {
        let environment = catalog.admission.environment
        return Baseline(
            sdkVersion: environment.sdkVersion, sdkABI: environment.sdkABI,
            toolchain: environment.runtimeToolchain ?? environment.compiledToolchain)
    }
}
