import Foundation
import Plugboard
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Testing

/// Storage that cannot escape its data directory, one file per key, and quotas.
@Suite struct StorageContainmentTests {
    @Test func aSymlinkedPluginFolderIsRefusedAndNothingIsWrittenThroughIt() throws {
        let data = try TemporaryDirectory(), outside = try TemporaryDirectory(), cache = try TemporaryDirectory()
        symlink(outside.path, data.file("fixture.a"))
        let host = PluginHost(configuration: .with(dataDirectory: data.path, cacheDirectory: cache.path))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.a"))
        let error = expectServiceError(.storageSymlink) { try store.set("x", for: "k") }
        #expect(error?.message.contains(data.file("fixture.a")) == true, "names the link")
        expectServiceError(.storageSymlink) { _ = try store.value(for: "k") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty, "nothing written outside")
    }

    @Test func aSymlinkedValueFileIsNotFollowed() throws {
        let data = try TemporaryDirectory(), outside = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(dataDirectory: data.path, cacheDirectory: cache.path))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.a"))
        try store.set("mine", for: "other")  // creates the folder
        let secret = try outside.write(Data("secret".utf8), as: "secret")
        let file = try (store as? FileKeyValueStore).map { try $0.path(for: "k") } ?? ""
        symlink(secret, file)
        expectServiceError(.storageSymlink) { _ = try store.value(for: "k") }
        // Writing replaces the link itself, never the file it points to.
        try store.set("new", for: "k")
        #expect(try store.string(for: "k") == "new")
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "secret")
    }

    /// A value file that is a FIFO or a hard link to another file is refused
    /// at once, naming what it is: a FIFO never blocks the read, and a link
    /// never hands out another file's contents.
    @Test(arguments: ["FIFO", "hard link"])
    func aValueFileThatIsNotAPlainFileOfItsOwnIsRefused(_ kind: String) throws {
        let data = try TemporaryDirectory(), outside = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(dataDirectory: data.path, cacheDirectory: cache.path))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.a"))
        try store.set("mine", for: "other")  // creates the folder
        let file = try (store as? FileKeyValueStore).map { try $0.path(for: "k") } ?? ""
        if kind == "FIFO" {
            #expect(mkfifo(file, 0o600) == 0)
        } else {
            let secret = try outside.write(Data("secret".utf8), as: "secret")
            #expect(link(secret, file) == 0)
        }
        let error = expectServiceError(.storageNotAFile) { _ = try store.value(for: "k") }
        #expect(error?.message.contains(kind == "FIFO" ? "is a FIFO" : "2 hard links") == true, "\(error?.message ?? "")")
        #expect(try store.string(for: "other") == "mine", "the other values are still read")
    }

    /// Something that is not a folder where the plugin's folder should be is
    /// named for what it is (a FIFO here), not called a symbolic link.
    @Test func aFIFOInPlaceOfThePluginsFolderIsNamedForWhatItIs() throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        #expect(mkfifo(data.file("fixture.a"), 0o600) == 0)
        let host = PluginHost(configuration: .with(dataDirectory: data.path, cacheDirectory: cache.path))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.a"))
        let error = expectServiceError(.storageNotAFile) { _ = try store.value(for: "k") }
        #expect(error?.message.contains("a FIFO where the plugin's storage folder should be") == true, "\(error?.message ?? "")")
        expectServiceError(.storageNotAFile) { try store.set("x", for: "k") }
    }

    /// Listing keys closes the folder it opened: 500 listings leave no
    /// descriptors behind (other tests running meanwhile open a few).
    @Test func listingKeysLeavesNoDescriptorOpen() throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(dataDirectory: data.path, cacheDirectory: cache.path))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.a"))
        try store.set("v", for: "k")
        func open() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }
        let before = open()
        for _ in 0..<500 { #expect(try store.keys() == ["k"]) }
        #expect(open() - before < 100, "\(open() - before) descriptors more after 500 listings")
    }

    @Test func composedAndDecomposedKeysAreOneKey() throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(dataDirectory: data.path, cacheDirectory: cache.path))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.a"))
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(Array(composed.utf8) != Array(decomposed.utf8))
        try store.set("one", for: composed)
        try store.set("two", for: decomposed)
        #expect(try store.keys() == [composed])
        #expect(try store.string(for: composed) == "two")
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.file("fixture.a")).filter { $0.hasSuffix(".value") }.count == 1)
    }

    @Test func quotasRefuseAWriteAndKeepWhatWasStored() throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let quota = StorageQuota(maximumBytes: 10, maximumKeys: 2, maximumValueBytes: 6)
        let host = PluginHost(configuration: .with(dataDirectory: data.path, cacheDirectory: cache.path, storageQuota: quota))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.a"))
        try store.set("12345", for: "a")
        let big = expectServiceError(.storageQuotaExceeded) { try store.set("1234567", for: "b") }
        #expect(big?.message.contains("a value is at most 6 bytes") == true, "\(big?.message ?? "")")
        try store.set("1234", for: "b")
        let keys = expectServiceError(.storageQuotaExceeded) { try store.set("1", for: "c") }
        #expect(keys?.message.contains("at most 2 keys") == true)
        let total = expectServiceError(.storageQuotaExceeded) { try store.set("123456", for: "b") }
        #expect(total?.message.contains("at most 10 bytes in all") == true)
        // Replacing within the limits works; nothing refused was written.
        try store.set("12345", for: "b")
        #expect(try store.string(for: "a") == "12345")
        #expect(try store.string(for: "b") == "12345")
        #expect(try store.keys() == ["a", "b"])
        #expect(host.diagnostics.filter { $0.code == "storage-quota-exceeded" }.count == 3, "the host is told too")
    }
}
