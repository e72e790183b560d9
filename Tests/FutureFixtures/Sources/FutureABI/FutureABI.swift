import Plugboard

// Compiled against the future SDK (one ABI minor ahead of the real SDK) but uses no new API.
final class FutureABI: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [] }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: FutureABI.self, id: "fixture.future-abi", version: "1.0.0", provides: [])
}
