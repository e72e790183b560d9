import Foundation
import Plugboard
import PlugboardHost

// plugboard-bench: run by `make bench` (release build). Prints each figure
// beside its baseline from the same run, and the ratio.
//   plugboard-bench --baseline PATH --plugins FILE...   full suite
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

guard arguments.count >= 3, arguments[0] == "--baseline", arguments[2] == "--plugins" else {
    FileHandle.standardError.write(Data("usage: plugboard-bench --baseline DLOPEN_BASELINE --plugins FILE...\n".utf8))
    exit(2)
}
let suite = BenchSuite(baseline: URL(fileURLWithPath: arguments[1]), plugins: Array(arguments.dropFirst(3)))
suite.run()
