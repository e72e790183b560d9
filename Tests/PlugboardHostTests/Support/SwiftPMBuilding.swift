import Foundation
import Testing

/// Every test that starts a SwiftPM build or test run of its own (a
/// scaffold, a release by URL, an interface package, the dev loop), nested
/// here so they run one at a time: two SwiftPM builds at once on a 2-core
/// machine share locks and thrash. Being one serialized suite, they also
/// hold one of the test pool's threads at most, never a second one waiting.
/// `make check` skips them (`--skip SwiftPMBuilding`); `make test` runs them.
@Suite(.serialized) enum SwiftPMBuilding {}

/// Tools some tests need beyond the toolchain.
enum Tools {
    /// strace, where installed.
    static let strace: URL? = ["/usr/bin/strace", "/bin/strace"].map(URL.init(fileURLWithPath:))
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    /// Under CI (`CI` set) no test may skip for a missing tool: it runs and fails.
    static let isCI = ProcessInfo.processInfo.environment["CI"] != nil
}
