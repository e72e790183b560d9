import Foundation
import Plugboard
import PlugboardHost

// plugboard-bench: run by `make bench` (release build). Prints each figure
// beside its baseline from the same run, and the ratio.
//   plugboard-bench --baseline PATH [--reload ...] --plugins FILE...   full suite
//   plugboard-bench load FILE...                        (internal) one load, prints ns

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "load" {
    // One cold load in a fresh process, like the C baseline.
    let files = Array(arguments.dropFirst())
    let data = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-data-\(getpid())").path
    defer { try? FileManager.default.removeItem(atPath: data) }
    let host = PluginHost(configuration: .init(dataDirectory: data, logSink: LogSink(minimumLevel: .error) { _ in }))
    host.declareStandardExtensionPoints()
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

let usage = """
usage: plugboard-bench --baseline DLOPEN_BASELINE [--reload PLUGBOARD V1.so V2.so EXAMPLE_PACKAGE SDK_DIR] --plugins FILE...
"""
guard arguments.count >= 3, arguments[0] == "--baseline", let pluginsIndex = arguments.firstIndex(of: "--plugins") else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
let baseline = URL(fileURLWithPath: arguments[1])
var reload: ReloadBench?
if let index = arguments.firstIndex(of: "--reload"), pluginsIndex - index == 6 {
    reload = ReloadBench(
        plugboard: arguments[index + 1], versions: [arguments[index + 2], arguments[index + 3]],
        examplePackage: arguments[index + 4], sdk: arguments[index + 5], baseline: baseline)
}
BenchSuite(baseline: baseline, plugins: Array(arguments[(pluginsIndex + 1)...]), reload: reload).run()
