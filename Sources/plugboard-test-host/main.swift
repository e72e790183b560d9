// A small host that is not `plugboard`: the tests use it to show that any
// program linking PlugboardHost scans plugins in copies of itself, and that
// the crash journal protects the next start of such a host.
//
// plugboard-test-host DIR CACHE [--activate-all] [--run COMMAND] [--scan-timeout-ms N] [--hang-threshold-ms N] [--versions]
//                     [--second DIR CACHE]
//
// Prints one line per plugin file: STATUS CODE ID FILE (CODE and ID are "-"
// when absent), then the command's output with --run. With --versions, also
// the SDK image this process runs with ("sdk-image PATH") and the versions
// each plugin's descriptor records ("versions FILE SDK-ABI SDK-VERSION").
//
// With --second, a second PluginHost runs in the same process, at the same
// time as the first (on a thread of its own), on its own plugins and cache
// directories with the same options: each keeps a crash journal of its own.
// Its lines follow the first host's, each prefixed "second ".
//
// Both hosts ask for the journal's SIGINT/SIGTERM handlers, as `plugboard` does.
import CPlugboardHost
import Foundation
import Plugboard
import PlugboardHost
import Synchronization

/// What the options ask of each host.
struct Options: Sendable {
    var activateAll = false
    var command: String?
    var scanTimeout: Duration?
    var hangThreshold: Duration?
    var versions = false

    init(_ arguments: [String]) {
        func value(_ name: String) -> String? {
            guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
            return arguments[index + 1]
        }
        activateAll = arguments.contains("--activate-all")
        versions = arguments.contains("--versions")
        command = value("--run")
        scanTimeout = value("--scan-timeout-ms").flatMap(Int.init).map { Duration.milliseconds($0) }
        hangThreshold = value("--hang-threshold-ms").flatMap(Int.init).map { Duration.milliseconds($0) }
    }
}

/// What one host prints, gathered so two hosts' lines do not interleave.
struct Report: Sendable {
    var output: [String] = []
    var errors: [String] = []
    var failed = false
}

/// The second host's report, handed from its thread to the main one.
final class SecondHost: Sendable {
    let report = Mutex(Report())
    let done = DispatchSemaphore(value: 0)
}

enum TestHost {
    /// The whole program. Static functions and locals, not top-level code's
    /// globals (main-actor isolated), so the second host's thread may use them.
    static func main(_ arguments: [String]) -> Int32 {
        let usage = "usage: plugboard-test-host DIR CACHE [--activate-all] [--run COMMAND] [--scan-timeout-ms N] "
            + "[--hang-threshold-ms N] [--versions] [--second DIR CACHE]\n"
        guard arguments.count >= 2 else {
            FileHandle.standardError.write(Data(usage.utf8))
            return 64
        }
        let directory = arguments[0], cache = arguments[1]
        let options = Options(Array(arguments.dropFirst(2)))
        var second: SecondHost?
        if let index = arguments.firstIndex(of: "--second") {
            guard index >= 2, index + 2 < arguments.count else {
                FileHandle.standardError.write(Data(usage.utf8))
                return 64
            }
            let secondDirectory = arguments[index + 1], secondCache = arguments[index + 2]
            let started = SecondHost()
            // At the same time as the first host: both may be inside plugin code at once.
            Thread.detachNewThread {
                let report = TestHost.runHost(directory: secondDirectory, cache: secondCache, options: options)
                started.report.withLock { $0 = report }
                started.done.signal()
            }
            second = started
        }
        var reports = [(prefix: "", report: runHost(directory: directory, cache: cache, options: options))]
        if let second {
            second.done.wait()
            reports.append((prefix: "second ", report: second.report.withLock { $0 }))
        }
        for (prefix, report) in reports {
            for line in report.output { print(prefix + line) }
            for line in report.errors { FileHandle.standardError.write(Data("\(prefix)\(line)\n".utf8)) }
        }
        return reports.contains { $0.report.failed } ? 1 : 0
    }

    /// Starts a host on `directory` and `cache`, does what `options` ask, shuts it down.
    static func runHost(directory: String, cache: String, options: Options) -> Report {
        var report = Report()
        var configuration = PluginHost.Configuration.with(pluginsDirectory: directory, cacheDirectory: cache)
        if let timeout = options.scanTimeout { configuration.scanner.timeout = timeout }
        if let threshold = options.hangThreshold { configuration.crashJournal.hangThreshold = threshold }
        // The tests interrupt this host while a plugin hangs: it must handle SIGINT/SIGTERM.
        configuration.crashJournal.handlesInterruptSignals = true
        let host = PluginHost(configuration: configuration)
        host.declare(Commands.self)
        do {
            try host.start()
        } catch {
            report.errors.append("\(error)")
            report.failed = true
            return report
        }
        if options.activateAll { host.activateAll() }
        var output: String?
        if let name = options.command {
            let registrations = host.registry.registrations(for: Commands.interface.id)
            if let registration = registrations.first(where: { ($0.provider as? any Command)?.name == name }),
               let command = registration.provider as? any Command {
                output = (try? host.journaled(call: registration.pluginID) { try command.run(arguments: []) }) ?? "<threw>"
            } else {
                output = "<no command \(name)>"
            }
        }
        for record in host.records {
            report.output.append([
                record.status.rawValue, record.code ?? "-", record.id ?? "-", String(record.path.split(separator: "/").last ?? ""),
            ].joined(separator: " "))
        }
        if let output { report.output.append(output) }
        if options.versions {
            // The image that defines the host's own ABI marker is the SDK this process runs with.
            let marker = "plugboard_sdk_abi_\(host.baseline.sdkABI.major)_\(host.baseline.sdkABI.minor)"
            if let file = plugboard_image_path(dlsym(UnsafeMutableRawPointer(bitPattern: 0), marker)) {
                report.output.append("sdk-image \(String(cString: file))")
            }
            for record in host.records {
                let file = String(record.path.split(separator: "/").last ?? "")
                report.output.append("versions \(file) \(record.sdkABI.map { "\($0)" } ?? "-") \(record.sdkVersion ?? "-")")
            }
        }
        for diagnostic in host.diagnostics {
            report.errors.append("\(diagnostic.severity.rawValue): \(diagnostic)")
        }
        host.shutdown()
        return report
    }
}

exit(TestHost.main(Array(CommandLine.arguments.dropFirst())))
