import Plugboard

final class Embedded: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [] }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: Embedded.self, id: "fixture.embedded", version: "1.0.0", provides: [])
}
