import Foundation
import Plugboard
@testable import PlugboardHost
import Testing

@Suite struct StorageTests {
    @Test(arguments: ["a/b", "../../etc/passwd", "..", ".", "/", "nul\u{0}key", "é✓", "key with spaces", String(repeating: "k", count: 120)])
    func anyKeyStaysInsideThePluginsSpace(_ key: String) throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let host = PluginHost(configuration: .init(dataDirectory: data.path, cacheDirectory: cache.path))
        defer { host.shutdown() }
        let a = try #require(host.storage(for: "fixture.a"))
        let b = try #require(host.storage(for: "fixture.b"))
        try a.set("from a", for: key)
        try b.set("from b", for: key)
        #expect(try a.string(for: key) == "from a")
        #expect(try b.string(for: key) == "from b")
        #expect(try a.keys() == [key])
        // Nothing was written outside the two plugin directories.
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path).sorted() == ["fixture.a", "fixture.b"])
        try a.removeValue(for: key)
        #expect(try a.string(for: key) == nil)
        #expect(try b.string(for: key) == "from b")
    }

    @Test func tooLongAndEmptyKeysAreRefusedAndLoseNothing() throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let host = PluginHost(configuration: .init(dataDirectory: data.path, cacheDirectory: cache.path))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.a"))
        try store.set("kept", for: "k")
        expectServiceError(.storageInvalidKey) { try store.set("x", for: String(repeating: "k", count: 121)) }
        expectServiceError(.storageInvalidKey) { try store.set("x", for: "") }
        let long = expectServiceError(.storageInvalidKey) { try store.set("x", for: String(repeating: "é", count: 100)) }
        #expect(long?.description.contains("limited to 120 UTF-8 bytes, this one has 200") == true)
        #expect(try store.string(for: "k") == "kept")
    }

    @Test func anUnwritableDataDirectoryIsATypedErrorAndOldDataSurvives() throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        // A regular file where a directory should be: not writable even for root.
        try data.write(Data("x".utf8), as: "blocker")
        let host = PluginHost(configuration: .init(dataDirectory: data.file("blocker"), cacheDirectory: cache.path))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.a"))
        let refused = expectServiceError(.storageNotWritable) { try store.set("v", for: "k") }
        #expect(refused?.description.contains(data.file("blocker")) == true)
        #expect(try String(contentsOfFile: data.file("blocker"), encoding: .utf8) == "x")
    }

    @Test func storageSurvivesANewHost() throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try withHost(.init(dataDirectory: data.path, cacheDirectory: cache.path)) { host in
            try #require(host.storage(for: "fixture.a")).set("1", for: "n")
        }
        let stored = try withHost(.init(dataDirectory: data.path, cacheDirectory: cache.path)) { host in
            try #require(host.storage(for: "fixture.a")).string(for: "n")
        }
        #expect(stored == "1")
    }

    /// A real writer process killed while it writes: the value is always a
    /// whole old or new value, never torn. The kill follows the writer's own
    /// "writing N" line (an event, not a delay), and the test checks that
    /// some kills really landed mid-write (a temporary file was left behind).
    @Test func aWriterKilledMidWriteLeavesAWholeValue() throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let writer = try Fixtures.executable("plugboard-storage-writer")
        var seenValues = 0, killedMidWrite = 0
        for round in 0..<12 {
            let process = Process()
            process.executableURL = writer
            process.arguments = [data.path]
            // Its host takes no cache argument: its default cache is under XDG_CACHE_HOME.
            process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CACHE_HOME": cache.file("writer")]) { $1 }
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            // Wait for write 2 + round % 3 to start, so earlier writes completed.
            let target = "writing \(2 + round % 3)"
            var received = ""
            while !received.contains(target) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                received += String(decoding: chunk, as: UTF8.self)
            }
            // Then the event that the write itself began: its temporary file.
            let directory = data.file("fixture.writer")
            let watch = inotify_init1(Int32(IN_CLOEXEC))
            inotify_add_watch(watch, directory, UInt32(IN_CREATE))
            let started = { ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).contains { $0.hasPrefix(".tmp-") } }
            var descriptor = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
            if !started() { _ = poll(&descriptor, 1, 10_000) }
            close(watch)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(".tmp-") }
            if !leftovers.isEmpty { killedMidWrite += 1 }
            for name in leftovers { try? FileManager.default.removeItem(atPath: "\(directory)/\(name)") }
            let reader = PluginHost(configuration: .init(dataDirectory: data.path, cacheDirectory: cache.path))
            defer { reader.shutdown() }
            let store = try #require(reader.storage(for: "fixture.writer"))
            guard let value = try store.value(for: "value") else { continue }
            seenValues += 1
            #expect(value.count == 1 << 20, "round \(round): torn length \(value.count)")
            #expect(value.allSatisfy { $0 == value[0] } && (value[0] == 65 || value[0] == 66), "round \(round): mixed bytes")
        }
        #expect(seenValues == 12, "every round completed a write before the kill")
        #expect(killedMidWrite > 0, "no kill landed inside a write: the test proved nothing")
    }
}
