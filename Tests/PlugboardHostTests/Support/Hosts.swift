import Foundation
import Plugboard
import PlugboardDemo
@testable import PlugboardHost

/// Runs `body` with a host made from `configuration` (declaring the demo
/// extension points unless `declaring` is false) and shuts the host down
/// when `body` returns or throws: a test leaves no live plugin, crash-journal
/// note or private images directory behind, even when a check fails.
///
/// Give the configuration a `cacheDirectory` (a ``TemporaryDirectory`` of
/// the test's): tests never share the registry cache of the user or of the
/// whole test run.
@discardableResult
func withHost<T>(
    _ configuration: PluginHost.Configuration, declaring: Bool = true, _ body: (PluginHost) throws -> T
) rethrows -> T {
    let host = PluginHost(configuration: configuration)
    defer { host.shutdown() }
    if declaring { host.declareDemoExtensionPoints() }
    return try body(host)
}

/// The files under `directory` that this process has mapped, from
/// /proc/self/maps: the images a host loaded in this very process (its
/// private copies, when `directory` is its images directory). Empty if the
/// maps cannot be read, so a test that relies on this also checks that a
/// file it knows is loaded is found.
func mappedFiles(under directory: String) -> Set<String> {
    let fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += chunk[0..<count]
    }
    // The kernel names files by their real path.
    let prefix = realPath(directory) + "/"
    var files: Set<String> = []
    // "address perms offset dev inode path": the path is the first "/" on.
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
        guard let start = line.firstIndex(of: "/") else { continue }
        var path = String(line[start...])
        if path.hasSuffix(" (deleted)") { path.removeLast(" (deleted)".count) }
        if path.hasPrefix(prefix) { files.insert(path) }
    }
    return files
}

/// `path` with every symlink resolved (itself if it cannot be).
func realPath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// A host on `dir/plugins`, holding the fixtures `names` (copied in that
/// order, numbered so file-name order is theirs), with the IsolationFaults
/// fixture isolated and quarantined after `crashes` crashes. Declares
/// `Commands` only; started, every plugin activated.
func faultsHost(in dir: TemporaryDirectory, _ names: [String], crashes: Int) throws -> PluginHost {
    try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    for (index, name) in names.enumerated() { _ = try dir.copy(Fixtures.library(name), as: "plugins/\(index)-\(name).so") }
    var configuration = PluginHost.Configuration.with(
        pluginsDirectory: dir.file("plugins"), dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache"))
    configuration.isolation.plugins["fixture.isolation-faults"] = .isolated
    configuration.isolation.restartBudget = RestartBudget(crashes: crashes, window: .seconds(300))
    let host = PluginHost(configuration: configuration)
    host.declare(Commands.self)
    try host.start()
    host.activateAll()
    return host
}
