import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost

// plugboard-bench: run by `make bench` (release build). Prints each figure
// beside its baseline from the same run, and the ratio.
//   plugboard-bench --baseline PATH [--reload ...] [--startup ...] --plugins FILE...   full suite
//   plugboard-bench load FILE...                        (internal) one load, prints ns

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "load" {
    // One load in a fresh process, like the C baseline. The registry cache
    // lives beside the files (the suite warms it first), never in ~/.cache.
    let files = Array(arguments.dropFirst())
    let data = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-data-\(getpid())").path
    defer { try? FileManager.default.removeItem(atPath: data) }
    let cache = URL(fileURLWithPath: files.first ?? "/tmp/x").deletingLastPathComponent().appendingPathComponent("cache").path
    let host = PluginHost(configuration: .init(
        dataDirectory: data, logSink: LogSink(minimumLevel: .error) { _ in }, cacheDirectory: cache))
    host.declareDemoExtensionPoints()
    let start = Measure.now()
    let records = host.load(files: files)
    let elapsed = Measure.now() - start
    let active = records.filter { $0.status == .active }.count
    guard active == files.count else {
        for record in records where record.status != .active { FileHandle.standardError.write(Data("\(record.error?.message ?? "")\n".utf8)) }
        exit(1)
    }
    print(elapsed)
    try? FileManager.default.removeItem(atPath: data)
    exit(0)
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
    usage: plugboard-bench --baseline DLOPEN_BASELINE [--reload PLUGBOARD V1.so V2.so EXAMPLE_PACKAGE SDK_DIR]
                           [--startup PLUGBOARD BENCH_PLUGIN.so DLOPEN_BASELINE] --plugins FILE...

    """
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
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
}
BenchSuite(baseline: baseline, plugins: Array(arguments[(pluginsIndex + 1)...]), reload: reload, startup: startup).run()
