import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost
import Testing

/// The documented rules beyond single bad files: duplicates, symlinks,
/// undeclared interfaces, disabled plugins, lifecycle order, packaging.
@Suite struct PluginHostTests {
    /// The registry cache and crash journal of the hosts a test makes (a
    /// suite value is made per test, so each test has its own).
    let cache: TemporaryDirectory

    init() throws {
        cache = try TemporaryDirectory("plugboard-cache")
    }

    /// A host on `dir`; the caller shuts it down.
    func host(_ dir: TemporaryDirectory, disabled: [String: String] = [:]) -> PluginHost {
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, disabledPlugins: disabled, cacheDirectory: cache.path))
        host.declareDemoExtensionPoints()
        return host
    }

    @Test func higherVersionWinsADuplicateIDWhateverTheFileOrder() throws {
        for (oldName, newName) in [("a.so", "b.so"), ("b.so", "a.so")] {
            let dir = try TemporaryDirectory()
            let old = try dir.copy(Fixtures.library("AlphaOld"), as: oldName)
            let new = try dir.copy(Fixtures.library("Alpha"), as: newName)
            let host = host(dir)
            defer { host.shutdown() }
            let records = try host.loadAll()
            let loser = try #require(records.first { $0.path == old })
            #expect(loser.code == "duplicate-id")
            #expect(loser.reason?.contains(new) == true)
            #expect(records.first { $0.path == new }?.status == .active)
            #expect(host.registry.providers(of: Commands.self).map(\.name) == ["alpha"])
        }
    }

    @Test func equalVersionsKeepTheFirstFileByName() throws {
        let dir = try TemporaryDirectory()
        let first = try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let second = try dir.copy(Fixtures.library("Alpha"), as: "b.so")
        let host = host(dir)
        defer { host.shutdown() }
        let records = try host.loadAll()
        #expect(records.first { $0.path == first }?.status == .active)
        #expect(records.first { $0.path == second }?.code == "duplicate-id")
    }

    @Test func aSymlinkToAPluginInATrustedFolderIsFollowed() throws {
        let elsewhere = try TemporaryDirectory()
        let real = try elsewhere.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        let dir = try TemporaryDirectory()
        symlink(real, dir.file("alpha.so"))
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path, cacheDirectory: cache.path, trust: DirectoryTrust(trustedDirectories: [elsewhere.path])))
        defer { host.shutdown() }
        host.declareDemoExtensionPoints()
        let records = try host.loadAll()
        #expect(records.count == 1)
        #expect(records[0].status == .active)
        #expect(records[0].path == dir.file("alpha.so"))
        #expect(records[0].resolvedPath == URL(fileURLWithPath: real).resolvingSymlinksInPath().path)
    }

    @Test func anUndeclaredInterfaceIsIgnoredWithAWarning() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Undeclared"), as: "u.so")
        let host = host(dir)
        defer { host.shutdown() }
        let record = try #require(try host.loadAll().first)
        #expect(record.status == .active)
        #expect(record.warnings == ["provides fixture.unknown 1.0.0, which this host does not declare; ignored"])
        #expect(host.registry.providers(of: Commands.self).map(\.name) == ["undeclared"])
    }

    @Test func aHostThatDeclaresNothingLoadsPluginsButRegistersNothing() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        defer { host.shutdown() }
        let record = try #require(try host.loadAll().first)
        #expect(record.status == .active)
        #expect(record.warnings.count == 1)
        #expect(host.registry.providers(of: Commands.self).isEmpty)
    }

    @Test func aDisabledPluginIsKeptOutAndReported() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library("Beta"), as: "b.so")
        let host = host(dir, disabled: ["fixture.beta": "host configuration"])
        defer { host.shutdown() }
        let records = try host.loadAll()
        #expect(records.map(\.status) == [.active, .disabled])
        #expect(records[1].code == "disabled")
        #expect(host.registry.providers(of: Commands.self).map(\.name) == ["alpha"])
    }

    @Test func shutdownDeactivatesInReverseOrderAndEmptiesTheRegistry() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library("Beta"), as: "b.so")
        try dir.copy(Fixtures.library("InitThrows"), as: "c.so")
        let log = dir.file("lifecycle.log")
        // In a child process: the fixtures log through an environment variable.
        // `run` activates the command providers (InitThrows provides none).
        let result = try runProcess(
            Fixtures.executable("plugboard"), ["run", "alpha", "--plugins", dir.path, "--cache", cache.path],
            environment: ["PLUGBOARD_FIXTURE_LOG": log])
        #expect(result.status == 0)
        let events = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(events == ["init alpha", "activate alpha", "init beta", "activate beta", "deactivate beta", "deactivate alpha"])
        let host = host(dir)
        defer { host.shutdown() }  // also when loading throws
        try host.loadAll()
        host.shutdown()
        #expect(host.registry.providers(of: Commands.self).isEmpty)
        #expect(host.activePluginIDs.isEmpty)
    }

    @Test func aMissingDirectoryIsAnErrorNotAnEmptyList() throws {
        let host = PluginHost(configuration: .with(pluginsDirectory: "/nonexistent/plugboard", cacheDirectory: cache.path))
        defer { host.shutdown() }
        let error = #expect(throws: PluginDirectory.ScanError.self) { try host.loadAll() }
        #expect(error?.code == .cannotOpen)
        #expect(error?.path == "/nonexistent/plugboard")
        // The failed call and its errno, not only their text.
        #expect(error?.systemCall?.call == "stat" && error?.systemCall?.errno == ENOENT, "\(String(describing: error?.systemCall))")
    }

    @Test func anInterfaceLibraryThatCannotBeInstalledIsADiagnosticNamingIt() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("lib"), withIntermediateDirectories: true)
        try dir.copy(Fixtures.library("Alpha"), as: "lib/libExporters.so")
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, imagesDirectory: dir.file("images"), cacheDirectory: cache.path))
        defer { host.shutdown() }
        // The images directory, good when the host was made, is now a plain
        // file: the host's own folder cannot be made in it (even as root).
        try FileManager.default.removeItem(atPath: dir.file("images"))
        try dir.write(Data("a file".utf8), as: "images")
        try host.discover()
        // Refused by the admission's last step, the copy, with the code any file gets there.
        let diagnostic = try #require(host.diagnostics.first { $0.code == "copy-failed" })
        #expect(diagnostic.message.contains(dir.file("lib/libExporters.so")), "\(diagnostic.message)")
        #expect(diagnostic.message.contains("interface library refused: cannot make the private copy"), "\(diagnostic.message)")
        #expect(host.lastDiscovery.interfaceLibraries.isEmpty)
    }

    @Test func theSDKLibraryBesideAPluginIsNotAPlugin() throws {
        // A plugin's build folder holds the SDK's library too: listing the folder
        // shows the plugin only, not libPlugboard.so as a broken plugin.
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "libAlpha.so")
        try dir.copy(Fixtures.library("Plugboard"), as: "libPlugboard.so")
        let host = host(dir)
        defer { host.shutdown() }
        let records = try host.discover()
        #expect(records.map { URL(fileURLWithPath: $0.path).lastPathComponent } == ["libAlpha.so"])
    }

    @Test func aFileGivenAsThePluginsDirectoryIsAnErrorThatSaysWhatToPass() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let host = PluginHost(configuration: .with(pluginsDirectory: file, cacheDirectory: cache.path))
        defer { host.shutdown() }
        let error = #expect(throws: PluginDirectory.ScanError.self) { try host.start() }
        #expect(error?.code == .notADirectory)
        #expect(error?.reason.contains("the directory that holds the .so files") == true)
    }

    @Test func aHostWithItsOwnStaticSDKCopyReportsAPackagingError() throws {
        let host = try Fixtures.executable("mispackaged-host", package: "Tests/EmbeddedFixture")
        let plugin = try Fixtures.library("Alpha")
        // It takes no cache argument: its default cache is under XDG_CACHE_HOME.
        let result = try runProcess(host, [plugin.path], environment: ["XDG_CACHE_HOME": cache.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("sdk-duplicated "), "\(result.stdout)")
        #expect(result.stdout.contains("mispackaged-host"), "names the host image")
        #expect(result.stdout.contains("Package.swift"), "says how to fix it")
    }

    @Test func aLoadedPluginsRecordCarriesItsDescriptor() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let host = host(dir)
        defer { host.shutdown() }
        let record = try #require(try host.loadAll().first)
        #expect(record.sdkABI == host.baseline.sdkABI)
        #expect(record.file?.sdkABI == host.baseline.sdkABI)
        #expect(record.toolchain.map { host.baseline.toolchain.contains($0) } == true)
        #expect(record.provides == [Commands.interface])
        #expect(record.generation == 1)
    }

    /// The descriptor's versions must be those the plugin was compiled with.
    /// Here the SDK image the process runs with is newer than the one Alpha
    /// and the host were compiled against: the future SDK (one ABI minor
    /// ahead, a superset) comes first on the library path. Versions filled in
    /// by the SDK library at run time would read the future ones.
    @Test func theEntryPointRecordsTheVersionsThePluginWasCompiledWithNotTheSDKItRunsWith() throws {
        let dir = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let future = try Fixtures.futureLibrary("Plugboard").deletingLastPathComponent().path
        let result = try runProcess(
            Fixtures.executable("plugboard-test-host"), [dir.path, cache.path, "--activate-all", "--versions"],
            environment: ["LD_LIBRARY_PATH": future])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("sdk-image \(future)/libPlugboard.so"), "runs with the future SDK: \(result.stdout)")
        #expect(lines.contains("active - fixture.alpha a.so"), "\(result.stdout)")
        let compiled = Fixtures.baseline
        #expect(lines.contains("versions a.so \(compiled.sdkABI) \(compiled.sdkVersion)"), "\(result.stdout)")
    }
}
