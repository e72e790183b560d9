// Test support (not installed).
//
// plugboard-storage-writer DATA_DIR: writes 1 MiB values of alternating
// bytes to one storage key forever, so a test can SIGKILL it mid-write and
// check the stored value is whole. Prints "writing N" (unbuffered) as write
// N starts, so the test kills on that event.
//
// plugboard-storage-writer DATA_DIR --fill PREFIX COUNT MAX_KEYS: prints
// "ready", waits for a line on stdin (the test's barrier, so several writers
// start together), then sets keys PREFIX-0 ... PREFIX-(COUNT-1) under a
// quota of MAX_KEYS keys and prints "stored S refused R".
import Foundation
import Plugboard
import PlugboardHost

let arguments = CommandLine.arguments
if arguments.count == 6, arguments[2] == "--fill", let count = Int(arguments[4]), let maximumKeys = Int(arguments[5]) {
    let host = PluginHost(configuration: .with(dataDirectory: arguments[1], storageQuota: StorageQuota(maximumKeys: maximumKeys)))
    guard let store = host.storage(for: "fixture.writer") else { fatalError("no data directory") }
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    _ = readLine()
    var stored = 0, refused = 0
    for index in 0..<count {
        do {
            try store.set(Array("value \(index)".utf8), for: "\(arguments[3])-\(index)")
            stored += 1
        } catch {
            guard error.code == .storageQuotaExceeded else { fatalError("\(error)") }
            refused += 1
        }
    }
    FileHandle.standardOutput.write(Data("stored \(stored) refused \(refused)\n".utf8))
    exit(0)
}

let host = PluginHost(configuration: .with(dataDirectory: arguments[1]))
guard let store = host.storage(for: "fixture.writer") else { fatalError("no data directory") }
var byte: UInt8 = 65
var round = 0
while true {
    round += 1
    FileHandle.standardOutput.write(Data("writing \(round)\n".utf8))
    try store.set([UInt8](repeating: byte, count: 1 << 20), for: "value")
    byte = byte == 65 ? 66 : 65
}
