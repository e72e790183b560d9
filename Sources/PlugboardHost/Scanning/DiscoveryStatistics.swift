/// What one discovery did: how much the registry cache saved.
public struct DiscoveryStatistics: Sendable, Equatable, Encodable {
    /// Candidates the registry cache answered for (file not opened).
    public var cacheHits = 0
    /// Plugin files opened and read.
    public var filesRead = 0
    /// Files sent to scanner processes.
    public var filesScanned = 0
    /// Scanner processes started.
    public var scannerProcesses = 0
    /// Interface libraries found in the plugins directory's `lib/` folder and
    /// put where plugins that need them find them (not plugins: never listed as such).
    public var interfaceLibraries: [String] = []

    public init() {}
}
