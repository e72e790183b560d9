import Plugboard

// Uses API only the future SDK has: dlopen in a real host would fail on it.
final class UsesFutureAPI: Plugin {
    let value: Int
    init(context: PluginContext) throws { value = futureOnlyAPI(1) }
    func contributions() -> [Contribution] { [] }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: UsesFutureAPI.self, id: "fixture.future-api", version: "1.0.0", provides: [])
}
