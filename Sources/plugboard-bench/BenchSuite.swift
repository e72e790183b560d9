import Foundation
import DemoInterfaces
import Plugboard
import PlugboardDemo
import PlugboardHost

/// The benchmarks of `make bench`.
struct BenchSuite {
    let baseline: URL
    let plugins: [String]
    let reload: ReloadBench?
    let startup: StartupBench?

    func run() {
        print("plugboard-bench (release build; ratios are against baselines measured in this run)")
        loading()
        registryCalls()
        events()
        routing()
        reload?.run()
        startup?.run()
    }

    // MARK: - Loading

    /// Load of N plugins in a fresh process with the registry cache warm
    /// (what a host start pays when it activates everything: read, hash and
    /// copy each file, dlopen, descriptor checks, create, activate,
    /// register) against a C program doing only dlopen + dlsym on the same files.
    func loading() {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = plugins.enumerated().map { index, path -> String in
            let copy = directory.appendingPathComponent("p\(index).so").path
            try? FileManager.default.copyItem(atPath: path, toPath: copy)
            return copy
        }
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // Untimed: fills the registry cache (the scan is measured by the startup benchmark).
        _ = timeProcess(me, ["load"] + files)
        var ours: [Double] = [], theirs: [Double] = []
        for _ in 0..<9 {
            guard let a = timeProcess(me, ["load"] + files), let b = timeProcess(baseline, files) else {
                print("  load benchmark failed (see stderr)")
                return
            }
            ours.append(a)
            theirs.append(b)
        }
        let (a, b) = (Measure.median(ours), Measure.median(theirs))
        print("\nLoading \(files.count) plugins (fresh process each, registry cache warm, median of 9)")
        Measure.row("dlopen + dlsym only (C baseline)", Measure.format(b))
        Measure.row("PluginHost.load (copy, checks, init, activate)", Measure.format(a), String(format: "%.2fx baseline", a / b))
        Measure.row("  per plugin", Measure.format(a / Double(files.count)), String(format: "+%@ over baseline", Measure.format((a - b) / Double(files.count))))
    }

    // MARK: - Registry

    final class LocalCommand {
        let stored = "local"
        @inline(never) func name() -> String { stored }
    }

    /// Calling a plugin's provider through the registry on every call,
    /// against a direct Swift call and a call on a provider held in a variable.
    func registryCalls() {
        let host = PluginHost()
        host.declareDemoExtensionPoints()
        host.load(files: plugins)
        guard let held = host.registry.providers(of: Commands.self).first else {
            print("  no command provider among the plugins; registry benchmark skipped")
            return
        }
        let iterations = 2_000_000
        let local = LocalCommand()
        let direct = Measure.perIteration(iterations: iterations) { _ in blackHole(local.name().utf8.count) }
        let existential = Measure.perIteration(iterations: iterations) { _ in blackHole(held.name.utf8.count) }
        let registry = Measure.perIteration(iterations: iterations) { _ in
            blackHole(host.registry.providers(of: Commands.self)[0].name.utf8.count)
        }
        print("\nCalling a provider (\(iterations) calls, best of 5)")
        Measure.row("direct Swift call (baseline)", Measure.format(direct))
        Measure.row("plugin provider held in a variable", Measure.format(existential), String(format: "%.2fx baseline", existential / direct))
        Measure.row("plugin provider looked up in the registry", Measure.format(registry), String(format: "%.2fx baseline", registry / direct))
        host.shutdown()
    }

    // MARK: - Events

    struct Tick: PluginEvent {
        static let name = "bench.tick"
        let n: Int
        let label: String
    }

    /// Typed events through the host's event bus against Foundation's
    /// NotificationCenter, same payloads, same number of observers.
    func events() {
        let observers = 10, posts = 100_000
        let host = PluginHost()
        let counter = Counter()
        for _ in 0..<observers {
            host.events.subscribe(Tick.self) { tick in counter.add(tick.n) }
        }
        let center = NotificationCenter()
        let name = Notification.Name("bench.tick")
        var tokens: [any NSObjectProtocol] = []
        for _ in 0..<observers {
            tokens.append(center.addObserver(forName: name, object: nil, queue: nil) { note in
                counter.add(note.userInfo?["n"] as? Int ?? 0)
            })
        }
        let foundation = Measure.perIteration(iterations: posts, rounds: 3) { index in
            center.post(name: name, object: nil, userInfo: ["n": index, "label": "tick"])
        }
        let ours = Measure.perIteration(iterations: posts, rounds: 3) { index in
            host.events.publish(Tick(n: index, label: "tick"))
        }
        print("\nEvent delivery (\(posts) events to \(observers) observers, best of 3)")
        Measure.row("NotificationCenter (baseline)", Measure.format(foundation) + "/event")
        Measure.row("EventBus, typed", Measure.format(ours) + "/event", String(format: "%.2fx baseline", ours / foundation))
        blackHole(tokens)
        blackHole(counter.value)
    }

    final class Counter: @unchecked Sendable {
        // @unchecked: only touched from the benchmark's single thread.
        var value = 0
        func add(_ n: Int) { value &+= n }
    }

    // MARK: - Router

    /// Lookups per second with 1,000 registered patterns, against an exact
    /// match in a Swift dictionary (which cannot capture parameters).
    func routing() {
        let host = PluginHost()
        var exact: [String: @Sendable () -> any Sendable] = [:]
        for index in 0..<1_000 {
            let title = "section \(index)"
            try? host.router.register("/section\(index)/items/{id}") { match in
                RenderedSection(title: title, lines: [match.parameter("id") ?? ""])
            }
            exact["/section\(index)/items/42"] = { RenderedSection(title: title, lines: ["42"]) }
        }
        let paths = (0..<1_000).map { "/section\(($0 * 7_919) % 1_000)/items/42" }
        let iterations = 200_000
        let dictionary = Measure.perIteration(iterations: iterations, rounds: 3) { index in
            blackHole(exact[paths[index % paths.count]]!())
        }
        let router = Measure.perIteration(iterations: iterations, rounds: 3) { index in
            blackHole(try? host.router.navigate(to: paths[index % paths.count]))
        }
        print("\nRouter with 1,000 patterns (\(iterations) lookups, best of 3)")
        Measure.row("exact-path dictionary (baseline)", String(format: "%.0f/s", 1e9 / dictionary))
        Measure.row("pattern router (captures {id})", String(format: "%.0f/s", 1e9 / router), String(format: "%.2fx baseline time", router / dictionary))
    }
}
