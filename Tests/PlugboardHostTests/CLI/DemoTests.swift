import Foundation
import Testing

/// `plugboard demo --json`: the same facts as the screen output.
@Suite struct DemoTests {
    @Test func theDemoShowsEveryStepAndStoragePersistsBetweenRuns() throws {
        let plugins = try Fixtures.examplesDirectory()
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let demo = Fixtures.repository.appendingPathComponent("Demo")
        func run() throws -> [String: Any] {
            let result = try runProcess(Fixtures.executable("plugboard"), [
                "demo", "--plugins", plugins.path, "--config", demo.appendingPathComponent("host-config.json").path,
                "--screen", demo.appendingPathComponent("checkout-screen.json").path, "--data", data.path, "--cache", cache.path, "--json",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        }
        let first = try run()
        let screen = try #require(first["screen"] as? [String: Any])
        let sections = try #require(screen["sections"] as? [[String: Any]])
        #expect(sections.map { $0["type"] as? String } == ["restaurant-header", "menu", "coupon", "checkout-summary"])
        #expect((screen["diagnostics"] as? [[String: Any]])?.map { $0["code"] as? String } == ["section-unknown-type", "section-decode-failed"])
        let navigation = try #require(first["navigation"] as? [[String: Any]])
        #expect((navigation[0]["destination"] as? [String: Any])?["title"] as? String == "Chez Plugboard")
        #expect(navigation[3]["code"] as? String == "route-not-found")
        let events = try #require(first["events"] as? [[String: Any]])
        #expect((events[0]["validation"] as? [String: Any])?["results"] != nil)
        let after = try #require((events[1]["checkoutAfter"] as? [String: Any])?["lines"] as? [String])
        #expect(after.contains { $0.contains("SAVE10 −10%") })
        #expect(((first["storage"] as? [[String: Any]])?[0]["output"] as? String) == "order #1 placed")
        // Reloading the checkout stops coupons (which requires it) first and starts it again on the new generation.
        let reload = try #require(first["reload"] as? [String: Any])
        #expect(reload["plan"] as? [String] == [
            "stop dev.plugboard.example.coupons", "switch dev.plugboard.example.checkout 1.0.0 → 1.0.0",
            "start dev.plugboard.example.coupons again",
        ])
        #expect(reload["result"] as? String == "reloaded")
        #expect(reload["dependents"] as? [String] == ["dev.plugboard.example.coupons gen 2"])
        #expect((reload["after"] as? [String: Any])?["output"] as? String == "applied SAVE10; delivered to 1 subscriber(s)")
        let second = try run()
        #expect(((second["storage"] as? [[String: Any]])?[0]["output"] as? String) == "order #2 placed")
    }

    /// The screen output names each problem once, however often it happened.
    @Test func theDemoPrintsEachDiagnosticOnce() throws {
        let plugins = try Fixtures.examplesDirectory()
        let data = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let demo = Fixtures.repository.appendingPathComponent("Demo")
        let result = try runProcess(Fixtures.executable("plugboard"), [
            "demo", "--plugins", plugins.path, "--config", demo.appendingPathComponent("host-config.json").path,
            "--screen", demo.appendingPathComponent("checkout-screen.json").path, "--data", data.path, "--cache", cache.path,
        ], environment: ["NO_COLOR": "1"])
        #expect(result.status == 0, "\(result.stderr)")
        let cycles = result.stdout.split(separator: "\n").filter { $0.contains("event cycle stopped") }
        #expect(cycles.count == 1, "\(cycles)")
    }
}
