import DemoInterfaces
import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// `make bench-check` and `make bench-record`: instructions counted by
/// `valgrind --tool=callgrind` for a few paths, the same count for the same
/// binary and input whatever else the machine does, so a regression gate
/// that wall-clock noise cannot fool. Each path runs in its own process under
/// callgrind, with collection on only inside `countedRegionForCallgrind()`.
enum InstructionCounts {
    /// One path: what is set up (not counted) and what is counted.
    struct Workload {
        let name: String
        /// Units of work in the counted region (counts are reported per unit).
        let iterations: Int
        let what: String
    }

    static let workloads = [
        Workload(name: "warm-start-50", iterations: 1, what: "a host made and started on 50 installed plugins, registry cache warm"),
        Workload(name: "activation", iterations: 1, what: "one available plugin activated (admission in full, dlopen, init, activate)"),
        Workload(name: "handle-call", iterations: 100_000, what: "a command provider's name through a ProviderHandle"),
        Workload(name: "typed-publish", iterations: 10_000, what: "a typed event published to 10 observers"),
        Workload(name: "router-lookup", iterations: 10_000, what: "a lookup among 1,000 route patterns"),
        Workload(name: "cross-publish", iterations: 10_000, what: "an event published to 10 observers of another type (compact coder)"),
    ]

    /// A count above the recorded one by more than this fails the check.
    static let margin = 0.03

    /// The committed counts (bench/instructions.json).
    struct Recorded: Codable {
        var note = "instructions per unit of work, counted by callgrind, glibc's per-CPU string functions left out (make bench-record writes this file)"
        var counts: [String: Double]
    }

    // MARK: - The driver

    /// `plugboard-bench instructions --check|--record FILE --call-plugin SO --template SO`.
    static func main(_ arguments: [String]) -> Never {
        guard let mode = arguments.first(where: { $0 == "--check" || $0 == "--record" }),
              let file = optionValues(arguments, mode, count: 1)?.first,
              let callPlugin = optionValues(arguments, "--call-plugin", count: 1)?.first,
              let template = optionValues(arguments, "--template", count: 1)?.first
        else {
            FileHandle.standardError.write(Data("usage: plugboard-bench instructions --check|--record FILE --call-plugin SO --template SO\n".utf8))
            exit(64)
        }
        guard access("/usr/bin/valgrind", X_OK) == 0 else {
            FileHandle.standardError.write(Data("plugboard-bench: valgrind is not installed (apt-get install valgrind); nothing was checked\n".utf8))
            exit(1)
        }
        let work = URL(fileURLWithPath: ".build/bench-check").absoluteURL
        do {
            try? FileManager.default.removeItem(at: work)
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            // valgrind 3.19 cannot read the DWARF 5 the toolchain writes:
            // everything counted runs from copies without debug information
            // (the symbol table, which callgrind matches names in, stays).
            let built = BenchSuite.executable.deletingLastPathComponent()
            let bin = work.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            for name in ["plugboard-bench", "libPlugboard.so", "libDemoInterfaces.so"] {
                try stripped(built.appendingPathComponent(name).path, to: bin.appendingPathComponent(name).path)
            }
            try stripped(callPlugin, to: bin.appendingPathComponent("libCallPlugin.so").path)
            try stripped(template, to: bin.appendingPathComponent("libTemplate.so").path)
            let me = bin.appendingPathComponent("plugboard-bench").path
            let setup = [work.path, bin.appendingPathComponent("libCallPlugin.so").path, bin.appendingPathComponent("libTemplate.so").path]
            print("Instructions per unit of work (callgrind, glibc's per-CPU string functions left out; \(mode == "--check" ? "checked against \(file), margin \(Int(margin * 100))%" : "recorded in \(file)"))")
            var counts: [String: Double] = [:]
            for workload in workloads {
                // Once natively first: fills the registry cache, catches a failing setup quickly.
                try run(me, ["count", workload.name] + setup)
                let count = try countInstructions(me, workload, setup: setup, in: work)
                counts[workload.name] = (count / Double(workload.iterations)).rounded()
            }
            if mode == "--record" {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                try encoder.encode(Recorded(counts: counts)).write(to: URL(fileURLWithPath: file))
                for workload in workloads { print("  " + pad(workload.name, 15) + pad(whole(counts[workload.name]!), 14, right: true) + "  " + workload.what) }
                print("recorded in \(file)")
                exit(0)
            }
            let recorded = try JSONDecoder().decode(Recorded.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
            var failed = false
            print("  " + pad("path", 15) + pad("recorded", 14, right: true) + pad("now", 14, right: true) + pad("change", 9, right: true))
            for workload in workloads {
                let now = counts[workload.name]!
                guard let before = recorded.counts[workload.name] else {
                    print("  " + pad(workload.name, 15) + pad("-", 14, right: true) + pad(whole(now), 14, right: true) + "  not recorded: run make bench-record")
                    failed = true
                    continue
                }
                let change = now / before - 1
                let over = change > margin
                failed = failed || over
                print("  " + pad(workload.name, 15) + pad(whole(before), 14, right: true) + pad(whole(now), 14, right: true)
                    + pad(String(format: "%+.2f%%", change * 100), 9, right: true) + (over ? "  ✗ over the \(Int(margin * 100))% margin" : ""))
            }
            if failed {
                print("bench-check: instruction counts grew; find why (valgrind --tool=callgrind, callgrind_annotate), or after a deliberate change record them again with `make bench-record`")
                exit(1)
            }
            print("bench-check: every count within \(Int(margin * 100))% of \(file)")
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("plugboard-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func whole(_ value: Double) -> String { String(Int(value)) }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return right ? fill + text : text + fill
    }

    /// Runs a child to its end; fails unless it exits 0.
    static func run(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // Swift seeds its hashing per process unless told not to: the same
        // input must take the same path every time.
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_DETERMINISTIC_HASHING": "1"].merging(extra) { $1 }) { $1 }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(([executable] + arguments).joined(separator: " ")) exited with \(process.terminationStatus):\n\(String(decoding: text.suffix(2000), as: UTF8.self))")
        }
    }

    /// Copies `source` to `target` without its debug information.
    static func stripped(_ source: String, to target: String) throws {
        try run("/usr/bin/objcopy", ["--strip-debug", source, target])
        chmod(target, 0o755)
    }

    /// Instructions of the counted region, but for glibc's string functions
    /// picked per CPU at load time (their counts differ from one machine to
    /// another, so the same build would not count the same elsewhere).
    static func countInstructions(_ me: String, _ workload: Workload, setup: [String], in work: URL) throws -> Double {
        let output = work.appendingPathComponent("callgrind.\(workload.name).out").path
        try run("/usr/bin/valgrind", [
            "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=*countedRegionForCallgrind*",
            "--callgrind-out-file=\(output)", me, "count", workload.name,
        ] + setup)
        let text = try String(contentsOfFile: output, encoding: .utf8)
        let functions = CallgrindProfile.selfCost(text)
        guard !functions.isEmpty else { throw Failure(description: "\(output): no cost recorded (was countedRegionForCallgrind reached?)") }
        return functions.filter { !CallgrindProfile.isCPUVariant($0.key) }.values.reduce(0, +)
    }

    // MARK: - The counted processes

    /// `plugboard-bench count NAME WORK CALL_PLUGIN TEMPLATE`: sets up, then
    /// runs the counted region once.
    static func count(_ arguments: [String]) -> Never {
        guard arguments.count == 4, let workload = workloads.first(where: { $0.name == arguments[0] }) else { exit(64) }
        let work = arguments[1], callPlugin = arguments[2], template = arguments[3]
        let quiet = BenchSuite.quiet
        switch workload.name {
        case "warm-start-50":
            let directory = work + "/plugins50", cache = work + "/cache50"
            if !FileManager.default.fileExists(atPath: directory) {
                do {
                    let image = try Data(contentsOf: URL(fileURLWithPath: template))
                    let offset = try StartupBench.placeholderOffset(in: image, file: template)
                    _ = try StartupBench.install(0...49, from: image, at: offset, in: URL(fileURLWithPath: directory))
                } catch {
                    FileHandle.standardError.write(Data("\(error)\n".utf8))
                    exit(1)
                }
            }
            let configuration = PluginHost.Configuration.with(
                pluginsDirectory: directory, logSink: quiet, imagesDirectory: work + "/images", cacheDirectory: cache)
            var started = 0
            measure {
                let host = PluginHost(configuration: configuration)
                host.declareDemoExtensionPoints()
                started = (try? host.start())?.filter { $0.status == .available || $0.status == .active }.count ?? 0
                host.shutdown()
            }
            exit(started == 50 ? 0 : 1)
        case "activation":
            // Its own images folder: the default's parent (the temp directory) is the machine's, not the path's.
            let configuration = PluginHost.Configuration.with(logSink: quiet, imagesDirectory: work + "/images", cacheDirectory: work + "/cache-activation")
            let host = PluginHost(configuration: configuration)
            host.declareDemoExtensionPoints()
            host.discover(files: [callPlugin])
            measure { host.activateAll() }
            exit(host.activePluginIDs.count == 1 ? 0 : 1)
        case "handle-call":
            let host = PluginHost(configuration: .with(logSink: quiet, imagesDirectory: work + "/images", cacheDirectory: work + "/cache-calls"))
            host.declareDemoExtensionPoints()
            host.discover(files: [callPlugin])
            host.activateAll()
            let handle = host.registry.handle(for: Commands.self)
            var total = 0
            measure { for _ in 0..<workload.iterations { total &+= handle.withFirst { $0.name.utf8.count } ?? 0 } }
            exit(total > 0 ? 0 : 1)
        case "typed-publish", "cross-publish":
            // Subscribers of the publisher's own type, or of another plugin's copy of it.
            let host = PluginHost(configuration: .with(logSink: quiet))
            let counter = BenchSuite.Counter()
            for _ in 0..<10 {
                if workload.name == "typed-publish" {
                    host.events.subscribe(BenchSuite.Tick.self) { counter.add($0.n) }
                } else {
                    host.events.subscribe(BenchSuite.TickCopy.self) { counter.add($0.n) }
                }
            }
            let bus = host.events
            for index in 0..<100 { bus.publish(BenchSuite.Tick(n: index, label: "tick")) }  // steady state first
            measure { for index in 0..<workload.iterations { bus.publish(BenchSuite.Tick(n: index, label: "tick")) } }
            exit(counter.value > 0 ? 0 : 1)
        case "router-lookup":
            let host = PluginHost(configuration: .with(logSink: quiet))
            for index in 0..<1_000 {
                let title = "section \(index)"
                try? host.router.register("/section\(index)/items/{id}") { match in RenderedSection(title: title, lines: [match.parameter("id") ?? ""]) }
            }
            let paths = (0..<1_000).map { "/section\(($0 * 7_919) % 1_000)/items/42" }
            let router = host.router
            var found = 0
            measure {
                for index in 0..<workload.iterations where (try? router.navigate(to: paths[index % paths.count])) != nil { found += 1 }
            }
            exit(found == workload.iterations ? 0 : 1)
        default:
            exit(64)
        }
    }

    /// Runs `body` as the counted region.
    static func measure(_ body: () -> Void) {
        withoutActuallyEscaping(body) { body in
            MeasuredRegion.body = body
            countedRegionForCallgrind()
            MeasuredRegion.body = nil
        }
    }
}

/// What the counted region runs. Set and cleared around the one call of
/// ``countedRegionForCallgrind()``, on the process's only thread doing so,
/// never read concurrently: `nonisolated(unsafe)` is sound here.
enum MeasuredRegion {
    nonisolated(unsafe) static var body: (() -> Void)?
}

/// The counted region: callgrind collects only while this runs
/// (`--toggle-collect=*countedRegionForCallgrind*`, matching its mangled name).
@inline(never)
func countedRegionForCallgrind() {
    MeasuredRegion.body?()
}
