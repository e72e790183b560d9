import Foundation
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

/// What the note file holds while calls run and after they return. The file
/// keeps its size between notes (newlines cover a longer note's tail), so
/// what a dead host's file says must still be exactly the notes running.
@Suite struct JournalFileTests {
    func note(_ id: String, path: String) -> CrashJournal.Note {
        CrashJournal.Note(pluginID: id, path: path, identity: nil, phase: .activate, date: "2026-11-26T00:00:00Z")
    }

    /// The notes the file says are running, as the next start reads them.
    func notes(in directory: TemporaryDirectory) throws -> [CrashJournal.Note?] {
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasSuffix(".note") })
        let bytes = [UInt8](try Data(contentsOf: directory.url.appendingPathComponent(name)))
        return bytes.split(separator: 0x0A).map { CrashJournal.note($0) }
    }

    func noteFileSize(in directory: TemporaryDirectory) throws -> Int {
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasSuffix(".note") })
        return try #require(try FileManager.default.attributesOfItem(atPath: directory.file(name))[.size] as? Int)
    }

    @Test func aShorterNoteAfterALongerOneIsReadAloneAndAReturnedCallLeavesNone() throws {
        let directory = try TemporaryDirectory()
        let journal = CrashJournal(directory: directory.path, hangThreshold: .seconds(60))
        defer { journal.close() }
        let long = note("fixture.long", path: "/plugins/" + String(repeating: "a-long-folder-name/", count: 20) + "libLong.so")
        let short = note("fixture.short", path: "/p/libShort.so")

        let whileLong = try journal.record(long) { () throws(any Error) in try notes(in: directory) }
        #expect(whileLong == [long])
        // Cleared by writing over it, not by shrinking the file.
        #expect(try notes(in: directory).isEmpty)
        #expect(try noteFileSize(in: directory) > 0)
        let whileShort = try journal.record(short) { () throws(any Error) in try notes(in: directory) }
        #expect(whileShort == [short], "no tail of the longer note is left to read")
        #expect(try notes(in: directory).isEmpty)
    }

    @Test func aFileThatGrewWithManyCallsAtOnceIsShrunkBackWithinThePaddingLimit() throws {
        let directory = try TemporaryDirectory()
        let journal = CrashJournal(directory: directory.path, hangThreshold: .seconds(60))
        defer { journal.close() }
        // Nested calls (one activating another) each add a note: 50 of them
        // are more than the padding a cleared file may keep. After each
        // inner call returns, the file says exactly the calls still running.
        var stale: [Int] = []
        func nest(_ depth: Int) throws -> (notes: Int, size: Int) {
            guard depth < 50 else { return (try notes(in: directory).count, try noteFileSize(in: directory)) }
            let running = note("fixture.nested\(depth)", path: "/plugins/a-folder/libNested\(depth).so")
            return try journal.record(running) { () throws(any Error) in
                let deepest = try nest(depth + 1)
                let now = try notes(in: directory)
                if now.count != depth + 1 || now.last != running { stale.append(depth) }
                return deepest
            }
        }
        let deepest = try nest(0)
        #expect(deepest.notes == 50)
        #expect(deepest.size > 4096, "the test needs more notes than the padding limit")
        #expect(stale.isEmpty, "depths whose file said other calls than those running: \(stale)")
        #expect(try notes(in: directory).isEmpty)
        #expect(try noteFileSize(in: directory) <= 4096)
    }
}
