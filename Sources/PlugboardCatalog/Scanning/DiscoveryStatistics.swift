/// What one discovery did: how much the registry cache saved.
public struct DiscoveryStatistics: Sendable, Equatable, Encodable {
    /// Candidates the registry cache answered for (file not opened).
    public package(set) var cacheHits = 0
    /// Plugin files opened and read.
    public package(set) var filesRead = 0
    /// Files sent to scanner processes.
    public package(set) var filesScanned = 0
    /// Scanner processes started.
    public package(set) var scannerProcesses = 0
    /// Interface libraries found in the plugins directory's `lib/` folder and
    /// put where plugins that need them find them (not plugins: never listed as such).
    public package(set) var interfaceLibraries: [String] = []

    init() {}

    /// Adds what another pass of the same discovery did.
    package mutating func add(_ other: DiscoveryStatistics) {
        cacheHits += other.cacheHits
        filesRead += other.filesRead
        filesScanned += other.filesScanned
        scannerProcesses += other.scannerProcesses
    }
}
