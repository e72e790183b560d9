import Plugboard
import PlugboardRegistry

extension Lifecycle {
    /// See ``PluginHost/commandProviders(named:)``.
    package func commandProviders(named name: String) -> [RegisteredProvider] {
        let interfaceID = Commands.interface.id
        let wanted = records.filter { record in
            guard record.status == .available, record.provides.contains(where: { $0.id == interfaceID }) else { return false }
            let declared = record.declaredCommands
            return declared.isEmpty || declared.contains(name)
        }.compactMap(\.id)
        if !wanted.isEmpty { activate(pluginIDs: Set(wanted)) }
        return registry.activeRegistrations(for: interfaceID)
    }

    /// See ``PluginHost/undeclaredCommands(among:)``.
    package func undeclaredCommands(among registrations: [RegisteredProvider]) -> [(pluginID: String, name: String, declared: [String])] {
        // Active records only: every registration is an active plugin's, and
        // a refused duplicate of its id may declare other names.
        let declared = Dictionary(records.filter { $0.status == .active }.compactMap { record in
            record.id.map { id in (id, record.declaredCommands) }
        }, uniquingKeysWith: { first, _ in first })
        return registrations.compactMap { registration in
            guard let command = registration.provider as? any Command, let names = declared[registration.pluginID], !names.isEmpty,
                  !names.contains(command.name) else { return nil }
            return (registration.pluginID, command.name, names)
        }
    }
}
