// Test support (not installed): writes 1 MiB values of alternating bytes to
// one storage key forever, so a test can SIGKILL it mid-write and check the
// stored value is whole. Prints "writing N" (unbuffered) as write N starts,
// so the test kills on that event. Usage: plugboard-storage-writer DATA_DIR
import Foundation
import PlugboardHost

let host = PluginHost(configuration: .init(dataDirectory: CommandLine.arguments[1]))
guard let store = host.storage(for: "fixture.writer") else { fatalError("no data directory") }
var byte: UInt8 = 65
var round = 0
while true {
    round += 1
    FileHandle.standardOutput.write(Data("writing \(round)\n".utf8))
    try store.set([UInt8](repeating: byte, count: 1 << 20), for: "value")
    byte = byte == 65 ? 66 : 65
}
