import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost

/// Hot-reload costs: the host's share (verify + load + switch, no compiler)
/// and a full save-to-live loop through `plugboard dev` on the Greeter example.
struct ReloadBench {
    let plugboard: String
    let versions: [String]
    let examplePackage: String
    let sdk: String
    let baseline: URL

    func run() {
        hostSide()
        saveToLive()
    }

    /// 20 reloads alternating two builds, with child-process verification.
    func hostSide() {
        let host = PluginHost()
        host.declareDemoExtensionPoints()
        guard host.load(reloadable: versions[0]).status == .active else {
            print("  reload benchmark: first load failed")
            return
        }
        let verifier = ChildVerifier(executable: plugboard, arguments: ["inspect", "--json"])
        var verify: [Double] = [], load: [Double] = [], switching: [Double] = [], memory: [Double] = []
        for index in 0..<20 {
            let outcome = host.reload("fixture.reloadable", from: versions[(index + 1) % 2], verifier: verifier)
            guard outcome.result == .reloaded else {
                print("  reload benchmark: \(outcome.error?.message ?? "failed")")
                return
            }
            verify.append(outcome.timings.verify)
            load.append(outcome.timings.load)
            switching.append(outcome.timings.switch)
            memory.append(Double(outcome.addedMemory))
        }
        // Baselines from this run: a cold dlopen+dlsym of the same file in C,
        // and starting a process that does nothing.
        let cold = (0..<9).compactMap { _ in timeProcess(baseline, [versions[1]]) }
        let spawn = (0..<9).map { _ -> Double in
            // Waited for like ChildVerifier waits (waitUntilExit polls a run loop).
            let start = Measure.now()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/true")
            let exited = DispatchSemaphore(value: 0)
            process.terminationHandler = { _ in exited.signal() }
            try? process.run()
            exited.wait()
            return Double(Measure.now() - start) / 1e6
        }
        let (v, l, s) = (Measure.median(verify), Measure.median(load), Measure.median(switching))
        let c = Measure.median(cold) / 1e6, p = Measure.median(spawn)
        print("\nHot reload, host side (20 reloads, medians)")
        Measure.row("baseline: cold dlopen + dlsym (C)", String(format: "%.2f ms", c))
        Measure.row("baseline: spawn /bin/true", String(format: "%.2f ms", p))
        Measure.row("verify (child process loads the build)", String(format: "%.2f ms", v), String(format: "%.1fx spawn", v / p))
        Measure.row("load (copy, checks, dlopen, init, state)", String(format: "%.2f ms", l), String(format: "%.1fx dlopen", l / c))
        Measure.row("switch (registry update, retire old)", String(format: "%.3f ms", s))
        Measure.row("memory per generation (mapped)", "\(Int(Measure.median(memory)) / 1024) KiB")
        host.shutdown()
    }

    /// Edits the Greeter example three times under `plugboard dev --json` and
    /// times save → `reloaded`, with the compiler's share.
    func saveToLive() {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-dev-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        let package = work.appendingPathComponent("Greeter")
        do {
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: examplePackage, toPath: package.path)
            try? FileManager.default.removeItem(at: package.appendingPathComponent(".build"))
            let manifest = package.appendingPathComponent("Package.swift")
            try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "../../SDK", with: sdk)
                .write(to: manifest, atomically: true, encoding: .utf8)
        } catch {
            print("  save-to-live benchmark: cannot copy the example: \(error)")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: plugboard)
        process.arguments = ["dev", package.path, "--json", "--data", work.appendingPathComponent("data").path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return }
        defer { process.terminate(); process.waitUntilExit() }
        let lines = LineStream(out.fileHandleForReading)
        guard lines.next(event: "ready") != nil else {
            print("  save-to-live benchmark: dev session did not start")
            return
        }
        let source = package.appendingPathComponent("Sources/Greeter/Greeter.swift")
        var totals: [Double] = [], builds: [Double] = []
        for round in 0..<3 {
            guard let text = try? String(contentsOf: source, encoding: .utf8) else { return }
            let start = Measure.now()
            try? text.replacingOccurrences(of: "\"Hello", with: "\"Hello\(round)").write(to: source, atomically: true, encoding: .utf8)
            guard let event = lines.next(event: "reloaded"), let ms = event["ms"] as? [String: Double] else {
                print("  save-to-live benchmark: no reload")
                return
            }
            totals.append(Double(Measure.now() - start) / 1e6)
            builds.append(ms["build"] ?? 0)
        }
        let total = Measure.median(totals), build = Measure.median(builds)
        print("\nSave to live, Greeter example under plugboard dev (3 edits, medians)")
        Measure.row("save → reloaded", String(format: "%.0f ms", total))
        Measure.row("  of which swift build", String(format: "%.0f ms", build), String(format: "%.0f%% of the total", build / total * 100))
        Measure.row("  of which Plugboard (detect..switch)", String(format: "%.0f ms", total - build))
    }
}

/// JSON lines from a child's stdout.
final class LineStream {
    private let handle: FileHandle
    private var buffer = Data()

    init(_ handle: FileHandle) { self.handle = handle }

    /// The next event named `name` (others are skipped); nil at end of stream.
    func next(event name: String) -> [String: Any]? {
        while true {
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                if let event = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], event["event"] as? String == name {
                    return event
                }
            }
            let data = handle.availableData
            if data.isEmpty { return nil }
            buffer.append(data)
        }
    }
}

func timeProcess(_ executable: URL, _ arguments: [String]) -> Double? {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    guard (try? process.run()) != nil else { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    return Double(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
}
