import Foundation
import PlugboardDemo
import PlugboardFleet
import PlugboardHostTesting
import PlugboardHost

// Two builds of one file. `make fuzz` builds it with `--sanitize=fuzzer
// --sanitize=address -DPLUGBOARD_FUZZER`: libFuzzer brings `main` and calls
// `LLVMFuzzerTestOneInput` with the target named by PLUGBOARD_FUZZ_TARGET
// (Tests/Fuzz/run does this for every target). An ordinary build is the
// command below, which `make test` uses to replay the committed corpus.

/// The fuzz targets: the host's parsers of untrusted input, and the demo's screen documents.
enum FuzzTargets {
    static let screenHost: PluginHost = {
        let host = PluginHost()
        host.declareDemoExtensionPoints()
        return host
    }()

    static let all: [(name: String, run: @Sendable (UnsafeRawBufferPointer) -> Void)] = ParserFuzzing.targets + FleetFuzzing.targets + [
        ("storage-keys", { @Sendable bytes in
            ParserFuzzing.storageKeys(bytes, composed: \.precomposedStringWithCanonicalMapping, decomposed: \.decomposedStringWithCanonicalMapping)
        }),
        ("screen", { @Sendable bytes in _ = screenHost.compose(screen: Data(bytes), source: "fuzz.json") }),
    ]

    static let names = all.map(\.name).joined(separator: ", ")

    static func named(_ name: String) -> (@Sendable (UnsafeRawBufferPointer) -> Void)? {
        all.first { $0.name == name }?.run
    }
}

#if PLUGBOARD_FUZZER
/// The target libFuzzer runs, from PLUGBOARD_FUZZ_TARGET (read once).
let selectedTarget: @Sendable (UnsafeRawBufferPointer) -> Void = {
    let name = ProcessInfo.processInfo.environment["PLUGBOARD_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTargets.named(name) else {
        FileHandle.standardError.write(Data("error: set PLUGBOARD_FUZZ_TARGET to one of: \(FuzzTargets.names)\n".utf8))
        exit(64)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    selectedTarget(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#else
@main
enum PlugboardFuzz {
    static let usage = """
        USAGE: plugboard-fuzz replay CORPUS-ROOT
               plugboard-fuzz list

        Fuzz targets for the host's parsers of untrusted input: \(FuzzTargets.names).
        `make fuzz` builds them with libFuzzer and runs each for a set time (Tests/Fuzz/run).

          replay   Feeds every file of CORPUS-ROOT/TARGET/ to TARGET once (make test does,
                   with Tests/Fuzz/corpus): a crashing input found by the fuzzer stays fixed.
          list     Prints the targets.

        EXIT CODES: 0 success, 1 a failure it reports (a crash ends the process with its signal), 64 usage error.
        """

    static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        exit(status)
    }

    static func main() {
        let arguments = CommandLine.arguments
        switch arguments.count > 1 ? arguments[1] : "" {
        case "-h", "--help", "help":
            print(usage)
        case "list":
            for target in FuzzTargets.all { print(target.name) }
        case "replay":
            guard arguments.count == 3 else { fail("'replay' takes the corpus root (Tests/Fuzz/corpus)\n\n\(usage)", status: 64) }
            replay(root: arguments[2])
        default:
            fail("\(arguments.count > 1 ? "unknown command '\(arguments[1])'" : "missing command")\n\n\(usage)", status: 64)
        }
    }

    static func replay(root: String) {
        var total = 0
        for target in FuzzTargets.all {
            let folder = "\(root)/\(target.name)"
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
            for name in names {
                guard let data = FileManager.default.contents(atPath: "\(folder)/\(name)") else {
                    fail("cannot read \(folder)/\(name)", status: 1)
                }
                data.withUnsafeBytes { target.run($0) }
            }
            print("\(target.name): \(names.count) inputs replayed")
            total += names.count
        }
        if total == 0 { fail("no inputs under \(root); pass the corpus root (Tests/Fuzz/corpus)", status: 1) }
    }
}
#endif
