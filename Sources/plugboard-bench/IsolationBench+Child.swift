import Foundation
import Plugboard
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// The lean child's memory: an isolated SDK-only plugin's child after a
/// call, against a C program that `dlopen`s the SDK and that plugin and
/// calls its entry (the floor), in the same run; a Foundation plugin's
/// child beside it.
extension IsolationBench {
    func childMemory(_ dir: String, foundationChild: Int32?, into report: Report) {
        guard let floorProgram, let echoPlugin else { return }
        let folder = dir + "/lean"
        guard stage(echoPlugin, in: folder, as: "echo.so") else { return }
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: folder + "/plugins", dataDirectory: folder + "/data", logSink: BenchSuite.quiet, cacheDirectory: folder + "/cache")
        configuration.isolation.others = .isolated
        let host = PluginHost(configuration: configuration)
        host.declare(Commands.self)
        defer { host.shutdown() }
        guard (try? host.start()) != nil, let command = host.registry.handle(for: Commands.self).first,
              (try? command.run(arguments: ["x"])) != nil, let pid = host.snapshot().compactMap({ $0.isolation?.pid }).first
        else {
            print("  isolation bench: the SDK-only plugin did not serve isolated: \(host.diagnostics.map(\.description))")
            return
        }
        var floors: [Double] = []
        for _ in 0..<3 {
            let run = Process()
            run.executableURL = URL(fileURLWithPath: floorProgram)
            run.arguments = ["--rss", "--call", echoPlugin]
            let output = Pipe()
            run.standardOutput = output
            guard (try? run.run()) != nil else { break }
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            run.waitUntilExit()
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("rss ") }), let kib = Double(line.dropFirst(4)) { floors.append(kib) }
        }
        report.add("resident memory of an SDK-only plugin's child, after a call", unit: "KiB", samples: [Double(residentKiB(of: pid))],
                   baselineName: "C: dlopen the SDK and the plugin, call its entry", baseline: floors, goal: .ratioAtMost(1.2))
        if let foundationChild {
            report.add("resident memory of a Foundation plugin's child (IsolationFaults)", unit: "KiB", samples: [Double(residentKiB(of: foundationChild))],
                       baselineName: "C: dlopen the SDK and the plugin, call its entry", baseline: floors)
        }
    }
}
