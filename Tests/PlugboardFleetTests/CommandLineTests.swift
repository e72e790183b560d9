import Foundation
import Testing

/// The fleet commands run as `plugboard NAME` from their own executable,
/// so libcurl is never loaded by `plugboard` (which scanners and isolated
/// children re-execute).
struct CommandLineTests {
    @Test func plugboardRunsTheFleetCommandsAndNeverLinksLibcurl() throws {
        for command in ["publish", "pull", "follow", "rollback", "export", "import"] {
            let help = try Fleet.run([command, "--help"])
            #expect(help.status == 0 && help.stdout.hasPrefix("OVERVIEW: ") && help.stdout.contains("USAGE: plugboard \(command)"), "\(command): \(help.stdout)")
        }
        let overview = try Fleet.run(["--help"])
        #expect(overview.stdout.contains("FLEET COMMANDS") && overview.stdout.contains("  follow "))
        let usage = try Fleet.run(["pull", "127.0.0.1:1/plugins/x:1"])
        #expect(usage.status == 64 && usage.stderr.contains("--plugins"), "\(usage.stderr)")
        let typo = try Fleet.run(["pul"])
        #expect(typo.status == 64 && typo.stderr.contains("did you mean 'pull'?"), "\(typo.stderr)")

        func libraries(_ program: String) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
            process.arguments = [program]
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
        #expect(!(try libraries(Fleet.tool)).contains("libcurl"), "plugboard links libcurl")
        #expect(try libraries(Fleet.tool + "-fleet").contains("libcurl"))
    }
}
