import PlugboardHost
import Plugboard
let host = PluginHost(configuration: .init(pluginsDirectory: CommandLine.arguments[1]))
host.declare(Commands.self)
for r in try host.loadAll() { print(r.path, r.status, r.id ?? "-", r.code ?? "", r.reason ?? "") }
for c in host.registry.providers(of: Commands.self) { print(try c.run(arguments: ["you"])) }
