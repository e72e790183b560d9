import Foundation
import Testing

/// `plugboard bisect`: real plugins, a real check (`plugboard run` under a
/// shell), the disabled list in the environment, the files untouched.
@Suite struct BisectTests {
    struct Report: Decodable {
        struct Step: Decodable {
            let enabled: [String]
            let failed: Bool
        }
        let steps: [Step]
        let result: String
        let culprits: [String]
    }

    /// A folder of seven plugins (three of them a dependency chain).
    func folder() throws -> (TemporaryDirectory, [String]) {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in ["Alpha", "Beta", "Gamma", "ProbeA", "DepTop", "DepMiddle", "DepBase"] { _ = try dir.copy(Fixtures.library(name), as: "plugins/\(name).so") }
        return (dir, ["--plugins", dir.file("plugins"), "--cache", dir.file("cache")])
    }

    /// `! plugboard run ... NAME && ...`: fails when every named command runs.
    func check(_ dir: TemporaryDirectory, failsWhenAllRun names: [String]) throws -> [String] {
        let plugboard = try Fixtures.executable("plugboard").path
        let runs = names.map { "\(plugboard) run --plugins \(dir.file("plugins")) --cache \(dir.file("cache")) \($0) > /dev/null 2>&1" }
        return ["--", "/bin/sh", "-c", "! (\(runs.joined(separator: " && ")))"]
    }

    func snapshot(_ dir: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.file("plugins")).sorted().map { name in
            let attributes = try FileManager.default.attributesOfItem(atPath: dir.file("plugins/\(name)"))
            return "\(name) \(attributes[.size] ?? 0) \((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
        }
    }

    @Test func oneCulpritIsNamedAndTheFilesAreNotTouched() throws {
        let (dir, options) = try folder()
        let before = try snapshot(dir)
        let result = try runProcess(Fixtures.executable("plugboard"), ["bisect", "--json"] + options + check(dir, failsWhenAllRun: ["beta"]))
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        #expect(report.result == "found")
        #expect(report.culprits == ["fixture.beta"])
        #expect(report.steps.first?.failed == true && report.steps.first?.enabled.count == 7)
        #expect(report.steps.dropFirst().first.map { $0.enabled.isEmpty && !$0.failed } == true)
        #expect(try snapshot(dir) == before)
        let text = try runProcess(Fixtures.executable("plugboard"), ["bisect"] + options + check(dir, failsWhenAllRun: ["beta"]))
        #expect(text.stdout.contains("culprit: fixture.beta"))
        #expect(text.stdout.contains("step 3:"))
    }

    /// Two plugins that fail only together, one of them requiring two
    /// others: both named, and every step that enables the top enables
    /// what it requires.
    @Test func pluginsThatFailOnlyTogetherAreNamedTogether() throws {
        let (dir, options) = try folder()
        let result = try runProcess(Fixtures.executable("plugboard"), ["bisect", "--json"] + options + check(dir, failsWhenAllRun: ["alpha", "top"]))
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        #expect(report.culprits == ["fixture.alpha", "fixture.dep.top"])
        for step in report.steps where step.enabled.contains("fixture.dep.top") {
            #expect(step.enabled.contains("fixture.dep.middle") && step.enabled.contains("fixture.dep.base"))
        }
    }

    /// Nothing to find: exit 1 with the reason; wrong usage: 64.
    @Test func aCheckThatDoesNotDependOnThePluginsIsSaidSo() throws {
        let (dir, options) = try folder()
        defer { withExtendedLifetime(dir) {} }
        let passes = try runProcess(Fixtures.executable("plugboard"), ["bisect", "--json"] + options + ["--", "/bin/true"])
        #expect(passes.status == 1)
        #expect(try JSONDecoder().decode(Report.self, from: Data(passes.stdout.utf8)).result == "passes-with-all")
        let fails = try runProcess(Fixtures.executable("plugboard"), ["bisect", "--json"] + options + ["--", "/bin/false"])
        #expect(fails.status == 1, "\(fails.stderr) \(fails.stdout)")
        #expect(try JSONDecoder().decode(Report.self, from: Data(fails.stdout.utf8)).result == "fails-with-none")
        let missing = try runProcess(Fixtures.executable("plugboard"), ["bisect"] + options + ["--", "no-such-check-program"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("cannot run 'no-such-check-program'"))
        // Found and executable, but not a program: the check cannot start, and no step is counted.
        let notAProgram = try dir.write(Data("echo hello".utf8), as: "not-a-program")
        #expect(chmod(notAProgram, 0o755) == 0)
        let unstartable = try runProcess(Fixtures.executable("plugboard"), ["bisect"] + options + ["--", notAProgram])
        #expect(unstartable.status == 1)
        #expect(unstartable.stderr.contains("cannot start '\(notAProgram)' (Exec format error): check that it is a program this machine can run"))
        #expect(!unstartable.stdout.contains("step 1"))
        #expect(try runProcess(Fixtures.executable("plugboard"), ["bisect"] + options).status == 64)
    }

    /// Started by a parent that ignores SIGCHLD (kept through `exec`): the
    /// tool sets it back to its default, so its checks are waited for and the
    /// culprit is still found (without that, every check "could not be waited for").
    @Test func aParentThatIgnoresSIGCHLDChangesNothing() throws {
        let (dir, options) = try folder()
        defer { withExtendedLifetime(dir) {} }
        let plugboard = try Fixtures.executable("plugboard").path
        // bash's `trap '' CHLD` ignores the signal; `exec` keeps it ignored.
        let ignoring = ["-c", "trap '' CHLD; exec \"$@\"", "bash", plugboard, "bisect", "--json"]
        let result = try runProcess(URL(fileURLWithPath: "/bin/bash"), ignoring + options + check(dir, failsWhenAllRun: ["beta"]))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8)).culprits == ["fixture.beta"])
    }

    /// What the check sees: the plugins named in PLUGBOARD_DISABLE are
    /// disabled, with that source.
    @Test func theToolHonoursTheDisabledListInTheEnvironment() throws {
        let (dir, options) = try folder()
        defer { withExtendedLifetime(dir) {} }
        let list = try runProcess(Fixtures.executable("plugboard"), ["list", "--json"] + options, environment: ["PLUGBOARD_DISABLE": "fixture.beta, fixture.gamma"])
        #expect(list.status == 0, "\(list.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        let plugins = try #require(document["plugins"] as? [[String: Any]])
        let disabled = plugins.filter { $0["status"] as? String == "disabled" }.compactMap { $0["id"] as? String }.sorted()
        #expect(disabled == ["fixture.beta", "fixture.gamma"])
        #expect(plugins.contains { ($0["reason"] as? String)?.contains("PLUGBOARD_DISABLE") == true })
    }
}
