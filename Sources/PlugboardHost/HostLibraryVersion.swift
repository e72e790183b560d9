extension PluginHost {
    /// The host library's own semantic version: the tag of the host
    /// repository `.ci/release` makes (the one source of it), bumped by the
    /// host API's changes (CHANGELOG.md). The SDK's version, which plugins
    /// are checked against, is separate (``Baseline/sdkVersion``).
    public static let libraryVersion = "3.1.0"
}
