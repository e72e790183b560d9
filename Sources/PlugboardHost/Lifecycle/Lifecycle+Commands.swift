import Plugboard

extension Lifecycle {
    /// See ``PluginHost/commandProviders(named:)``.
    func commandProviders(named name: String) -> [RegisteredProvider] {
        let interfaceID = Commands.interface.id
        let wanted = records.filter { record in
            guard record.status == .available, record.provides.contains(where: { $0.id == interfaceID }) else { return false }
            let declared = record.declaredCommands
            return declared.isEmpty || declared.contains(name)
        }.compactMap(\.id)
        if !wanted.isEmpty { activate(pluginIDs: Set(wanted)) }
        return registry.activeRegistrations(for: interfaceID)
    }
}
