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

/// The timestamps of signed lock files and crash notes, written and read
/// without Foundation's formatters, in the form those wrote.
@Suite struct UTCTimestampTests {
    @Test func aMomentIsWrittenInUTCToTheSecondAndReadBack() throws {
        let moment = Date(timeIntervalSince1970: 1_795_715_901)
        let text = UTCTimestamp.string(from: moment)
        #expect(text == "2026-11-26T17:58:21Z")
        #expect(UTCTimestamp.date(from: text) == moment)
        #expect(UTCTimestamp.string(from: Date(timeIntervalSince1970: 1_795_715_901.9)) == text, "fractions are dropped, as the formatter did")
    }

    @Test func anOffsetIsTheSameMomentAsItsUTCForm() {
        #expect(UTCTimestamp.date(from: "2026-11-26T18:58:21+01:00") == UTCTimestamp.date(from: "2026-11-26T17:58:21Z"))
        #expect(UTCTimestamp.date(from: "2026-11-26T12:28:21-05:30") == UTCTimestamp.date(from: "2026-11-26T17:58:21Z"))
    }

    @Test(arguments: [
        "", "2026-11-26", "2026-11-26T17:58:21", "2026-11-26 17:58:21Z", "2026-11-26T17:58:21z",
        "2026-11-26T17:58:21+0100", "2026-11-26T17:58:21+01:60", "2026-13-01T00:00:00Z", "2026-02-31T00:00:00Z",
        "2026-11-26T24:00:00Z", "2026-11-26T17:58:60Z", "x026-11-26T17:58:21Z", "2026-11-26T17:58:21.5Z",
    ])
    func anythingElseIsNotAMoment(_ text: String) {
        #expect(UTCTimestamp.date(from: text) == nil)
    }
}
