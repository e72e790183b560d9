// A host packaged the wrong way: PlugboardHost and the SDK linked statically
// from their sources, so the host has its own SDK copy and plugins bring
// libPlugboard.so. Prints "<code> <reason>" per plugin file given.
import Plugboard
import PlugboardHost

let host = PluginHost()
host.declare(Commands.self)
host.discover(files: Array(CommandLine.arguments.dropFirst()))
host.activateAll()
for record in host.records {
    print("\(record.code ?? "active") \(record.reason ?? "")")
}
