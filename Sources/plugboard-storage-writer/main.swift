// Test support (not installed): writes 1 MiB values of alternating bytes to
// one storage key forever, so a test can SIGKILL it mid-write and check the
// stored value is whole. Usage: plugboard-storage-writer DATA_DIR
import PlugboardHost

let host = PluginHost(configuration: .init(dataDirectory: CommandLine.arguments[1]))
guard let store = host.storage(for: "fixture.writer") else { fatalError("no data directory") }
var byte: UInt8 = 65
while true {
    try store.set([UInt8](repeating: byte, count: 1 << 20), for: "value")
    byte = byte == 65 ? 66 : 65
}
