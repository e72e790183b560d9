// A small host that is not `plugboard`: the tests use it to show that any
// program linking PlugboardHost scans plugins in copies of itself, and that
// the crash journal protects the next start of such a host.
//
// plugboard-test-host DIR CACHE [--activate-all] [--run COMMAND] [--scan-timeout-ms N] [--hang-threshold-ms N] [--versions]
//
// Prints one line per plugin file: STATUS CODE ID FILE (CODE and ID are "-"
// when absent), then the command's output with --run. With --versions, also
// the SDK image this process runs with ("sdk-image PATH") and the versions
// each plugin's descriptor records ("versions FILE SDK-ABI SDK-VERSION").
import CPlugboardHost
import Foundation
import Plugboard
import PlugboardHost

var arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: plugboard-test-host DIR CACHE [--activate-all] [--run COMMAND] [--scan-timeout-ms N] [--hang-threshold-ms N] [--versions]\n".utf8))
    exit(64)
}
let directory = arguments.removeFirst(), cache = arguments.removeFirst()
let options = arguments
func option(_ name: String) -> String? {
    let arguments = options
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
var configuration = PluginHost.Configuration(pluginsDirectory: directory, cacheDirectory: cache)
if let ms = option("--scan-timeout-ms").flatMap(Int.init) { configuration.scanner.timeout = .milliseconds(ms) }
if let ms = option("--hang-threshold-ms").flatMap(Int.init) { configuration.hangThreshold = .milliseconds(ms) }
let host = PluginHost(configuration: configuration)
host.declare(Commands.self)
do {
    try host.start()
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
if arguments.contains("--activate-all") { host.activateAll() }
var output: String?
if let name = option("--run") {
    let registrations = host.registry.registrations(for: Commands.interface.id)
    if let registration = registrations.first(where: { ($0.provider as? any Command)?.name == name }),
       let command = registration.provider as? any Command {
        output = (try? host.journaled(call: registration.pluginID) { try command.run(arguments: []) }) ?? "<threw>"
    } else {
        output = "<no command \(name)>"
    }
}
for record in host.records {
    print(record.status.rawValue, record.code ?? "-", record.id ?? "-", String(record.path.split(separator: "/").last ?? ""))
}
if let output { print(output) }
if options.contains("--versions") {
    // The image that defines the host's own ABI marker is the SDK this process runs with.
    let marker = "plugboard_sdk_abi_\(host.baseline.sdkABI.major)_\(host.baseline.sdkABI.minor)"
    if let file = plugboard_image_path(dlsym(UnsafeMutableRawPointer(bitPattern: 0), marker)) {
        print("sdk-image", String(cString: file))
    }
    for record in host.records {
        let file = String(record.path.split(separator: "/").last ?? "")
        print("versions", file, record.sdkABI.map { "\($0)" } ?? "-", record.sdkVersion ?? "-")
    }
}
for diagnostic in host.diagnostics {
    FileHandle.standardError.write(Data("\(diagnostic.severity.rawValue): \(diagnostic)\n".utf8))
}
host.shutdown()
