import Foundation
import PlugboardHost
import Testing

/// `--isolate`, `--isolate-all` and the settings file's `"isolated"`, as an
/// operator uses them: real `plugboard` processes on the IsolationFaults fixture.
@Suite struct IsolationCLITests {
    struct Listing: Decodable {
        struct Plugin: Decodable {
            struct Isolation: Decodable {
                let mode: String
                let state: String
            }
            let id: String
            let isolation: Isolation?
        }
        let plugins: [Plugin]
    }

    func folder() throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try dir.copy(Fixtures.library("IsolationFaults"), as: "plugins/plugin.so")
        return dir
    }

    func plugboard(_ dir: TemporaryDirectory, _ arguments: [String]) throws -> ProcessResult {
        // The options go before `--`: what follows it is the command's.
        let options = ["--plugins", dir.file("plugins"), "--cache", dir.file("cache"), "--data", dir.file("data")]
        var all = arguments
        all.insert(contentsOf: options, at: arguments.firstIndex(of: "--") ?? arguments.count)
        return try runProcess(Fixtures.executable("plugboard"), all)
    }

    func mode(_ dir: TemporaryDirectory, _ arguments: [String]) throws -> String? {
        let listed = try plugboard(dir, ["list", "--json"] + arguments)
        return try JSONDecoder().decode(Listing.self, from: Data(listed.stdout.utf8)).plugins.first?.isolation?.mode
    }

    @Test func theFlagsAndTheSettingsFileChooseWhereAPluginRuns() throws {
        let dir = try folder()
        #expect(try mode(dir, []) == "in-process")
        #expect(try mode(dir, ["--isolate", "fixture.isolation-faults"]) == "isolated")
        #expect(try mode(dir, ["--isolate", "other.plugin,fixture.isolation-faults"]) == "isolated")
        #expect(try mode(dir, ["--isolate", "other.plugin"]) == "in-process")
        #expect(try mode(dir, ["--isolate-all"]) == "isolated")
        let settings = try dir.write(Data(#"{"plugins": {"fixture.isolation-faults": {"isolated": true}}}"#.utf8), as: "settings.json")
        #expect(try mode(dir, ["--config", settings]) == "isolated")
        let human = try plugboard(dir, ["list", "--isolate-all"])
        #expect(human.stdout.contains("isolated (not-started)"))
    }

    @Test func aWrongIsolateValueIsAUsageError() throws {
        let dir = try folder()
        let result = try plugboard(dir, ["list", "--isolate", ","])
        #expect(result.status == 64)
        #expect(result.stderr.contains("'--isolate' takes plugin ids separated by commas"))
    }

    @Test func aWrongIsolatedTypeInTheSettingsFileIsReportedAndIgnored() throws {
        let dir = try folder()
        let settings = try dir.write(Data(#"{"plugins": {"fixture.isolation-faults": {"isolated": "yes"}}}"#.utf8), as: "settings.json")
        let parsed = HostSettings.load(from: settings)
        #expect(parsed.diagnostics.map(\.code) == ["config-invalid-type"])
        #expect(parsed.diagnostics.first?.keyPath == "plugins.fixture.isolation-faults.isolated")
        #expect(parsed.plugins["fixture.isolation-faults"]?.isolated == nil)
        #expect(try mode(dir, ["--config", settings]) == "in-process")
    }

    /// `run` of an isolated plugin's command: its output, what it prints (on
    /// stderr, with its id), and a crash that costs the command, not the tool.
    @Test func runOfAnIsolatedCommandReportsItsCrashAndItsPrints() throws {
        let dir = try folder()
        let printed = try plugboard(dir, ["run", "fault", "--isolate-all", "--", "print"])
        #expect(printed.status == 0)
        #expect(printed.stdout == "printed\n")
        #expect(printed.stderr.contains("fixture.isolation-faults: printed by an isolated plugin during a call"))
        let crashed = try plugboard(dir, ["run", "fault", "--isolate-all", "--", "segv"])
        #expect(crashed.status == 1)
        #expect(crashed.stderr.contains("was killed by SIGSEGV during the call of run"))
        #expect(crashed.stderr.contains("[plugin-crashed]"))
        // Nothing is quarantined by it: the tool did not crash.
        let again = try plugboard(dir, ["run", "fault", "--isolate-all", "--", "echo", "fine"])
        #expect(again.stdout == "fine\n")
    }
}
