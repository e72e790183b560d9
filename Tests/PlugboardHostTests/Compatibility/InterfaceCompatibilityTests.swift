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

@Suite struct InterfaceCompatibilityTests {
    struct Case: Sendable, CustomStringConvertible {
        let host: String
        let provided: String
        let accepted: Bool
        var description: String { "host \(host), provider \(provided)" }
    }

    static let cases: [Case] = [
        .init(host: "1.2", provided: "1.2", accepted: true),
        .init(host: "1.2", provided: "1.1", accepted: true),
        .init(host: "1.2", provided: "1.0", accepted: true),
        .init(host: "1.2", provided: "1.3", accepted: false),
        .init(host: "1.2", provided: "2.0", accepted: false),
        .init(host: "2.0", provided: "1.2", accepted: false),
        .init(host: "1.2.0", provided: "1.2.9", accepted: true),
        .init(host: "1.2.9", provided: "1.2.0", accepted: true),
        .init(host: "0.2", provided: "0.2", accepted: true),
        .init(host: "0.2.3", provided: "0.2.1", accepted: true),
        .init(host: "0.2", provided: "0.1", accepted: false),
        .init(host: "0.2", provided: "0.3", accepted: false),
        .init(host: "0.2", provided: "1.2", accepted: false),
        .init(host: "1.0", provided: "0.9", accepted: false),
    ]

    @Test(arguments: cases)
    func rule(_ testCase: Case) throws {
        let host = try #require(SemanticVersion(testCase.host))
        let provided = try #require(SemanticVersion(testCase.provided))
        #expect(InterfaceCompatibility.accepts(host: host, provided: provided) == testCase.accepted)
    }

    @Test func semanticVersionsParseStrictly() {
        #expect(SemanticVersion("1.2.3") == SemanticVersion(1, 2, 3))
        #expect(SemanticVersion("1.2") == SemanticVersion(1, 2, 0))
        for bad in ["", "1", "1.2.3.4", "a.b", "1.-2", "1.2-beta", " 1.2", "1..2", "+1.2", "1.2.", "99999999999.0"] {
            #expect(SemanticVersion(bad) == nil, "\(bad)")
        }
        #expect(SemanticVersion(1, 10) > SemanticVersion(1, 9, 9))
    }

    /// The SDK ABI in a descriptor and a cache entry: MAJOR.MINOR, digits only.
    @Test func abiVersionsParseExactlyTwoNumbers() {
        #expect(ABIVersion("2.2") == ABIVersion(major: 2, minor: 2))
        #expect(ABIVersion("10.0") == ABIVersion(major: 10, minor: 0))
        for bad in ["", "2", "2.", ".2", "2.2.1", "2..2", "a.b", "2.x", "-1.0", "+2.2", "-0.0", "2.+2", " 2.2", "99999999999.0"] {
            #expect(ABIVersion(bad) == nil, "\(bad)")
        }
    }
}
