import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost

// plugboard-bench: run by `make bench` (release build). Prints each figure
// beside its baseline from the same run, and the ratio, then one summary
// table, also written as JSON.
//   plugboard-bench --baseline PATH --call-plugin FILE [--malloc-counter SO] [--json FILE]
//                   [--reload ...] [--startup ...] [--dependency-plugin FILE] --plugins FILE...     full suite
//   plugboard-bench instructions --check|--record FILE --call-plugin SO --template SO      make bench-check, bench-record
//   plugboard-bench activate DIR | allocations | reload-memory V1 V2 | count NAME ...   (internal, in child processes)

let arguments = Array(CommandLine.arguments.dropFirst())

// Internal subcommands, run in child processes by the suite.
switch arguments.first {
case "activate" where arguments.count == 2:
    BenchSuite.printActivation(of: arguments[1])
case "allocations":
    BenchSuite.printAllocationsPerPublish()
case "exit":
    exit(0)
case "reload-memory" where arguments.count == 3:
    ReloadBench.printReloadMemory(Array(arguments[1...2]))
case "bare-activate" where arguments.count > 1:
    BareHarness.run(Array(arguments.dropFirst()))
case "count":
    InstructionCounts.count(Array(arguments.dropFirst()))
case "instructions":
    InstructionCounts.main(Array(arguments.dropFirst()))
default:
    break
}

/// The `count` values after `option`; nil if it is absent, or they run short
/// or include an option (so a missing value is not taken from the next one).
func optionValues(_ arguments: [String], _ option: String, count: Int) -> [String]? {
    guard let index = arguments.firstIndex(of: option), index + count < arguments.count else { return nil }
    let values = Array(arguments[(index + 1)...(index + count)])
    return values.contains { $0.hasPrefix("--") } ? nil : values
}

func usageFailure() -> Never {
    let usage = """
    usage: plugboard-bench --baseline DLOPEN_BASELINE --call-plugin RELEASE_PLUGIN.so [--malloc-counter COUNTER.so]
                           [--json FILE] [--reload PLUGBOARD V1.so V2.so EXAMPLE_PACKAGE SDK_DIR]
                           [--startup PLUGBOARD BENCH_PLUGIN.so DLOPEN_BASELINE [--spawner SPAWN_MEASURED]]
                           [--isolation-plugin ISOLATION_FAULTS.so [--async-plugin ASYNC_QUOTER.so]] [--slow-start-plugin BENCH_SLOW_START.so]
                           [--dependency-plugin BENCH_DEP_PLUGIN.so (with --startup)] --plugins FILE...

    """
    FileHandle.standardError.write(Data(usage.utf8))
    exit(64)
}

guard arguments.count >= 3, arguments[0] == "--baseline", let pluginsIndex = arguments.firstIndex(of: "--plugins") else {
    usageFailure()
}
let baseline = URL(fileURLWithPath: arguments[1])
var reload: ReloadBench?
if arguments.contains("--reload") {
    guard let values = optionValues(arguments, "--reload", count: 5) else { usageFailure() }
    reload = ReloadBench(
        plugboard: values[0], versions: [values[1], values[2]], examplePackage: values[3], sdk: values[4], baseline: baseline)
}
var startup: StartupBench?
if arguments.contains("--startup") {
    guard let values = optionValues(arguments, "--startup", count: 3) else { usageFailure() }
    // Absolute: posix_spawn does not search PATH, and the Makefile passes some paths relative.
    let absolute = values.map { URL(fileURLWithPath: $0).path }
    startup = StartupBench(plugboard: absolute[0], template: absolute[1], baseline: absolute[2])
    startup?.spawner = optionValues(arguments, "--spawner", count: 1)?.first.map { URL(fileURLWithPath: $0).path }
}
// Needs --startup: the same tool and template.
let dependencies = optionValues(arguments, "--dependency-plugin", count: 1)?.first.flatMap { file in
    startup.map { DependencyBench(startup: $0, dependent: URL(fileURLWithPath: file).path) }
}
guard let callPlugin = optionValues(arguments, "--call-plugin", count: 1)?.first else { usageFailure() }
let isolation = optionValues(arguments, "--isolation-plugin", count: 1)?.first.map {
    IsolationBench(plugin: URL(fileURLWithPath: $0).path, asyncPlugin: optionValues(arguments, "--async-plugin", count: 1)?.first.map { URL(fileURLWithPath: $0).path },
                   floorProgram: baseline.path, echoPlugin: optionValues(arguments, "--call-plugin", count: 1)?.first.map { URL(fileURLWithPath: $0).path })
}
let parallelStarts = optionValues(arguments, "--slow-start-plugin", count: 1)?.first.map { ParallelStartBench(template: URL(fileURLWithPath: $0).path) }
let mallocCounter = optionValues(arguments, "--malloc-counter", count: 1)?.first.map { URL(fileURLWithPath: $0).path }
let json = optionValues(arguments, "--json", count: 1)?.first ?? "bench/out/bench.json"
BenchSuite(
    baseline: baseline, plugins: Array(arguments[(pluginsIndex + 1)...]), callPlugin: callPlugin, reload: reload,
    startup: startup, dependencies: dependencies, isolation: isolation, parallelStarts: parallelStarts, mallocCounter: mallocCounter
).run(json: json)
