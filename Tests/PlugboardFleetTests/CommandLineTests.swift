import Foundation
import Testing

/// The fleet commands run as `plugboard NAME` from their own executable,
/// so libcurl is never loaded by `plugboard` (which scanners and isolated
/// children re-execute).
extension FleetSuites {
@Suite struct CommandLineTests {
    @Test func plugboardRunsTheFleetCommandsAndNeverLinksLibcurl() throws {
        for command in ["publish", "pull", "follow", "rollback", "export", "import"] {
            let help = try Fleet.run([command, "--help"])
            #expect(help.status == 0 && help.stdout.hasPrefix("OVERVIEW: ") && help.stdout.contains("USAGE: plugboard \(command)"), "\(command): \(help.stdout)")
        }
        let overview = try Fleet.run(["--help"])
        #expect(overview.stdout.contains("FLEET COMMANDS") && overview.stdout.contains("  follow "))
        let usage = try Fleet.run(["pull", "127.0.0.1:1/plugins/x:1"])
        #expect(usage.status == 64 && usage.stderr.contains("--plugins"), "\(usage.stderr)")
        // Each wrong option gets 64 and names what is wrong.
        for (arguments, says) in [
            (["pull", "127.0.0.1:1/plugins/x:1", "--plugins", "/tmp/x"], "--trusted-key"),
            (["pull", "127.0.0.1:1/plugins/x:1", "--plugins", "/tmp/x", "--trusted-key", "k.pub", "--sequence-floor", "-1"], "--sequence-floor"),
            (["pull", "127.0.0.1:1/plugins/x:1", "--plugins", "/tmp/x", "--trusted-key", "k.pub", "--platform", "amd64"], "OS/ARCH"),
            (["follow", "127.0.0.1:1/plugins/x:1", "--plugins", "/tmp/x", "--trusted-key", "k.pub", "--interval", "0"], "--interval"),
            (["follow", "127.0.0.1:1/plugins/x@sha256:" + String(repeating: "a", count: 64), "--plugins", "/tmp/x", "--trusted-key", "k.pub"], "a digest never changes"),
            (["publish", "/tmp/x", "127.0.0.1:1/plugins/x@sha256:" + String(repeating: "a", count: 64)], "not a digest"),
            (["pull", "127.0.0.1:1/plugins/x@sha256:ABC", "--plugins", "/tmp/x", "--trusted-key", "k.pub"], "sha256"),
        ] {
            let result = try Fleet.run(arguments)
            #expect(result.status == 64 && result.stderr.contains(says), "\(arguments): \(result.stderr)")
        }
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
}
