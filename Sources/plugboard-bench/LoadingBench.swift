import DemoInterfaces
import Foundation
import Synchronization
@_spi(PlugboardHost) import Plugboard
import PlugboardDemo
import PlugboardHost
import PlugboardHostTesting

/// Loading, admission and storage: activation in a fresh process against a C program's dlopen, the admission steps, storage writes.
extension BenchSuite {
    /// Activation of available plugins (registry cache warm) in a fresh
    /// process, per plugin, against a C program's dlopen + dlsym of the same
    /// files; and the resident memory each activated plugin adds.
    func loading() {
        report.begin("Loading (fresh process each run, 9 runs, \(plugins.count) plugins, registry cache warm)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = plugins.enumerated().map { index, path -> String in
            let copy = directory.appendingPathComponent("p\(index).so").path
            try? FileManager.default.copyItem(atPath: path, toPath: copy)
            return copy
        }
        let me = BenchSuite.executable
        // Untimed: fills the registry cache (the scan is measured by the startup benchmark).
        _ = runNumbers(me, ["activate", directory.path])
        var ours: [Double] = [], theirs: [Double] = [], memory: [Double] = []
        for _ in 0..<9 {
            guard let a = runNumbers(me, ["activate", directory.path]), a.count == 2, let b = runNumbers(baseline, files)?.first else {
                print("  load benchmark failed (see stderr)")
                return
            }
            ours.append(a[0] / Double(files.count) / 1e6)
            memory.append(a[1] / Double(files.count))
            theirs.append(b / Double(files.count) / 1e6)
        }
        report.add("activation per plugin (available → active)", unit: "ms", samples: ours,
                   baselineName: "C dlopen+dlsym", baseline: theirs,
                   note: "the loader's share; the goal is against the fair floor below")
        report.add("resident memory per activated plugin", unit: "KiB", samples: memory)
        fairActivationFloor(me: me)
    }

    /// Activation against the same work with nothing of Plugboard's host (a
    /// bare harness: dlopen, entry, factory, create with a trivial context,
    /// activate), in fresh processes, on 12 copies of BenchPlugin (it asks for
    /// no service, so the harness can create it).
    func fairActivationFloor(me: URL) {
        guard let template = startup?.template else { return }
        StartupBench.inWorkFolder("activation-floor", benchmark: "activation floor") { work in
            let image = try Data(contentsOf: URL(fileURLWithPath: template))
            let offset = try StartupBench.placeholderOffset(in: image, file: template)
            let directory = work.appendingPathComponent("plugins")
            let files = try startup!.install(12, from: image, at: offset, in: directory)
            _ = runNumbers(me, ["activate", directory.path])  // untimed: fills the registry cache
            var ours: [Double] = [], bare: [Double] = [], copying: [Double] = []
            for _ in 0..<9 {
                guard let a = runNumbers(me, ["activate", directory.path]), a.count == 2,
                      let b = runNumbers(me, ["bare-activate"] + files)?.first,
                      let c = runNumbers(me, ["bare-activate", "--private-copy"] + files)?.first else {
                    throw StartupBench.Failure("an activation run failed (see stderr)")
                }
                ours.append(a[0] / Double(files.count) / 1e6)
                bare.append(b / Double(files.count) / 1e6)
                copying.append(c / Double(files.count) / 1e6)
            }
            report.add("activation per plugin, BenchPlugin copies", unit: "ms", samples: ours,
                       baselineName: "bare harness (dlopen, entry, create, activate)", baseline: bare, goal: .ratioAtMost(1.3),
                       note: "bound: a loader of the bytes it checked pays a private copy (last row); the rest: checks, hash, journal notes, registry")
            report.add("activation against the harness with a private copy", unit: "ms", samples: ours,
                       baselineName: "bare harness + read and copy", baseline: copying,
                       note: "the harness loading a copy written from the bytes it read, as any loader that loads what it checked must")
            report.add("floor: the harness with a private copy against the bare harness", unit: "ms", samples: copying,
                       baselineName: "bare harness", baseline: bare,
                       note: "the bound of the goal above: above 1.3x, no loader that keeps the copy can meet it")
        }
    }

    /// Each admission step per plugin file, in this process, over the same
    /// files: warm discovery runs step 1 only; a cold file, and now also a
    /// plugin known from the cache when it activates, run them all.
    func admission() {
        report.begin("Admission per plugin file (in process, 25 rounds over \(plugins.count) files, µs per file)")
        let images = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-images-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: images) }
        var samples: [AdmissionCost.Sample] = []
        for _ in 0..<25 {
            for file in plugins {
                guard let sample = AdmissionCost.measure(file, images: images) else {
                    print("  admission benchmark: \(file) was not admitted")
                    return
                }
                samples.append(sample)
            }
        }
        func micro(_ step: (AdmissionCost.Sample) -> Double) -> [Double] { samples.map { step($0) / 1_000 } }
        let read = micro(\.read)
        report.add("trust only (warm discovery)", unit: "µs", samples: micro(\.trust), baselineName: "one read", baseline: read)
        report.add("admit, all steps (no lock)", unit: "µs", samples: micro(\.admit),
                   baselineName: "one read", baseline: read)
        report.add("of which static checks", unit: "µs", samples: micro(\.staticChecks),
                   baselineName: "one read", baseline: read)
        report.add("of which the private copy", unit: "µs", samples: micro(\.copy), baselineName: "one read", baseline: read)
        report.add("SHA-256 (lock file only)", unit: "µs", samples: micro(\.sha256), baselineName: "one read", baseline: read)
        report.add("before: cache → active (read+copy)", unit: "µs",
                   samples: samples.map { ($0.read + $0.copy) / 1_000 }, baselineName: "one read", baseline: read,
                   note: "what activating a plugin known from the cache cost before the admission step: no trust, no static checks")
    }

    /// A storage `set` of a new key as the folder fills: the quota check
    /// reads a usage record, so 10,000 keys cost what 10 do (it listed the
    /// folder before: about 5x at 10,000).
    func storage() {
        report.begin("Storage set of a new key (fsync'd, 200 sets, µs per set)")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-storage-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        guard let few = StorageCost.setNanoseconds(keys: 10, sets: 200, root: root),
            let many = StorageCost.setNanoseconds(keys: 10_000, sets: 200, root: root)
        else {
            print("  storage benchmark: a set failed in \(root)")
            return
        }
        report.add("set, folder of 10,000 keys", unit: "µs", samples: many.map { $0 / 1_000 },
                   baselineName: "set, folder of 10 keys", baseline: few.map { $0 / 1_000 }, goal: .ratioAtMost(1.5))
    }

    /// In the child: start on `directory` (cache warm), then time activating
    /// everything; prints the nanoseconds and the resident KiB it added.
    static func printActivation(of directory: String) {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-bench-data-\(getpid())").path
        let host = PluginHost(configuration: .with(
            pluginsDirectory: directory, dataDirectory: data, logSink: quiet, cacheDirectory: directory + "/cache"))
        host.declareDemoExtensionPoints()
        guard (try? host.start()) != nil else { exit(1) }
        let before = Memory.residentKiB()
        let start = Measure.now()
        host.activateAll()
        let elapsed = Measure.now() - start
        let added = Memory.residentKiB() - before
        let records = host.records
        // A clean stop, as a host's: it removes its private copies, which a
        // later run would otherwise sweep up as a dead host's (timed there).
        host.shutdown()
        try? FileManager.default.removeItem(atPath: data)
        guard records.allSatisfy({ $0.status == .active }) else {
            for record in records where record.status != .active {
                FileHandle.standardError.write(Data("\(record.error?.message ?? "\(record.path): \(record.status)")\n".utf8))
            }
            exit(1)
        }
        print(elapsed, added)
        exit(0)
    }
}
