import Foundation
import Testing

/// `.ci/prerequisites`, the one step `make run`, `make test` and CI take
/// before building: a missing tool stops it with the line that installs it.
@Suite struct PrerequisitesTests {
    let script = Fixtures.repository.appendingPathComponent(".ci/prerequisites").path

    @Test func aMissingToolStopsWithTheAptGetLineThatInstallsIt() throws {
        // No PATH to find strace, valgrind, apt-get or id on: as a machine without them.
        let result = try runProcess(URL(fileURLWithPath: "/bin/sh"), [script], environment: ["PATH": "/nonexistent"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("prerequisites: missing"), "\(result.stderr)")
        #expect(result.stderr.contains("apt-get install") && result.stderr.contains("strace") && result.stderr.contains("valgrind"), "\(result.stderr)")
    }

    @Test func whatMakeRunNeedsIsFoundHere() throws {
        // libssl-dev's headers only: `make run` does not need strace or valgrind.
        let result = try runProcess(URL(fileURLWithPath: "/bin/sh"), [script, "--run-only"], environment: ["PATH": "/nonexistent"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test(arguments: [["--bogus"], ["a", "b"]])
    func badUsageExits64(_ arguments: [String]) throws {
        let result = try runProcess(URL(fileURLWithPath: "/bin/sh"), [script] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains("usage: .ci/prerequisites"), "\(result.stderr)")
    }

    @Test func helpSaysWhatItDoesAndItsExitCodes() throws {
        let result = try runProcess(URL(fileURLWithPath: "/bin/sh"), [script, "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Exit: 0 everything is there, 1 something is missing, 64 usage error"), "\(result.stdout)")
    }
}
