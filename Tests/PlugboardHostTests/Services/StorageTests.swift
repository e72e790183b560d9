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

@Suite struct StorageTests {
    @Test(arguments: ["a/b", "../../etc/passwd", "..", ".", "/", "nul\u{0}key", "é✓", "key with spaces", String(repeating: "k", count: 120)])
    func anyKeyStaysInsideThePluginsSpace(_ key: String) throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(dataDirectory: data.path, cacheDirectory: cache.path))
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
        let host = PluginHost(configuration: .with(dataDirectory: data.path, cacheDirectory: cache.path))
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
        let host = PluginHost(configuration: .with(dataDirectory: data.file("blocker"), cacheDirectory: cache.path))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.a"))
        let refused = expectServiceError(.storageNotWritable) { try store.set("v", for: "k") }
        #expect(refused?.description.contains(data.file("blocker")) == true)
        #expect(try String(contentsOfFile: data.file("blocker"), encoding: .utf8) == "x")
    }

    @Test func storageSurvivesANewHost() throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try withHost(.with(dataDirectory: data.path, cacheDirectory: cache.path)) { host in
            try #require(host.storage(for: "fixture.a")).set("1", for: "n")
        }
        let stored = try withHost(.with(dataDirectory: data.path, cacheDirectory: cache.path)) { host in
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
            let reader = PluginHost(configuration: .with(dataDirectory: data.path, cacheDirectory: cache.path))
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

/// The key quota is checked against a usage record kept under a lock, so
/// it costs the same at 10,000 keys as at 10 (see `make bench`, storage) and
/// stays exact with several processes writing one plugin's folder.
@Suite struct StorageUsageTests {
    func usage(_ data: TemporaryDirectory, _ plugin: String) -> String {
        (try? String(contentsOfFile: data.file("\(plugin)/.usage"), encoding: .utf8)) ?? ""
    }

    func valueFiles(_ data: TemporaryDirectory, _ plugin: String) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: data.file(plugin))) ?? []).filter { $0.hasSuffix(".value") }.count
    }

    /// Two writer processes, released together, each try 25 new keys under
    /// a quota of 30: exactly 30 are stored and 20 refused, and the record
    /// says so. (Counted from a listing, each could see 29 and both write.)
    @Test func twoProcessesFillingOneFolderStopExactlyAtTheQuota() throws {
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let writer = try Fixtures.executable("plugboard-storage-writer")
        var processes: [(Process, Pipe, Pipe)] = []
        for name in ["a", "b"] {
            let process = Process()
            process.executableURL = writer
            process.arguments = [data.path, "--fill", name, "25", "30"]
            process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CACHE_HOME": cache.file(name)]) { $1 }
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            processes.append((process, input, output))
        }
        // The barrier: both say ready before either is told to go.
        var outputs: [String] = []
        for (_, _, output) in processes {
            var received = ""
            while !received.contains("ready\n") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                received += String(decoding: chunk, as: UTF8.self)
            }
            #expect(received.contains("ready"))
        }
        for (_, input, _) in processes { input.fileHandleForWriting.write(Data("go\n".utf8)) }
        for (process, _, output) in processes {
            outputs.append(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
            process.waitUntilExit()
        }
        let counts = outputs.map { text -> (Int, Int) in
            let words = text.split(whereSeparator: \.isWhitespace)
            guard let at = words.firstIndex(of: "stored"), words.count > at + 3 else { return (-1, -1) }
            return (Int(words[at + 1]) ?? -1, Int(words[at + 3]) ?? -1)
        }
        #expect(counts.map(\.0).reduce(0, +) == 30, "\(outputs)")
        #expect(counts.map(\.1).reduce(0, +) == 20, "\(outputs)")
        #expect(valueFiles(data, "fixture.writer") == 30)
        #expect(usage(data, "fixture.writer").hasPrefix("v1 30 "), "\(usage(data, "fixture.writer"))")
        #expect(usage(data, "fixture.writer").hasSuffix(" clean\n"))
    }

    /// A record left dirty (a writer died between its value and the record)
    /// or torn is not trusted: the folder is counted again, once.
    @Test(arguments: ["v1 0 0 dirty\n", "garbage", ""])
    func aDirtyOrTornRecordIsRecounted(_ record: String) throws {
        let data = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(dataDirectory: data.path, storageQuota: StorageQuota(maximumKeys: 4)))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.counted"))
        for key in ["a", "b", "c"] { try store.set(Array("v".utf8), for: key) }
        try record.write(toFile: data.file("fixture.counted/.usage"), atomically: false, encoding: .utf8)
        try store.set(Array("v".utf8), for: "d")
        #expect(throws: ServiceError.self) { try store.set(Array("v".utf8), for: "e") }
        #expect(usage(data, "fixture.counted") == "v1 4 4 clean\n")
        // Removing counts down.
        try store.removeValue(for: "a")
        #expect(usage(data, "fixture.counted") == "v1 3 3 clean\n")
    }

    /// The record is a file of the storage's own: a FIFO or a link in its
    /// place is refused with its code, without blocking and writing nothing.
    @Test func aFIFOOrLinkInTheRecordsPlaceIsRefused() throws {
        let data = try TemporaryDirectory(), outside = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(dataDirectory: data.path))
        defer { host.shutdown() }
        let store = try #require(host.storage(for: "fixture.counted"))
        try store.set(Array("v".utf8), for: "a")
        let record = data.file("fixture.counted/.usage")
        unlink(record)
        #expect(mkfifo(record, 0o600) == 0)
        let fifo = #expect(throws: ServiceError.self) { try store.set(Array("v".utf8), for: "b") }
        #expect(fifo?.code == .storageNotAFile, "\(String(describing: fifo))")
        unlink(record)
        #expect(symlink(outside.file("usage"), record) == 0)
        let link = #expect(throws: ServiceError.self) { try store.set(Array("v".utf8), for: "b") }
        #expect(link?.code == .storageSymlink, "\(String(describing: link))")
        #expect(!FileManager.default.fileExists(atPath: outside.file("usage")))
        #expect(try store.value(for: "b") == nil)
    }
}
