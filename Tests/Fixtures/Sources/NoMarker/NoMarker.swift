import Plugboard

/// A Swift library with a `plugboard_entry` function and a plugin type, but
/// which never calls `PluginExport.descriptor`, so it does not reference the
/// SDK's ABI marker: not built against the SDK's contract. (No FixtureSupport:
/// that links the descriptor code, and the marker with it.)
final class NoMarker: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [] }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer? { nil }
