/// Opt in to keep state across a hot reload: the old generation's
/// ``saveState()`` is encoded as JSON and handed to the new generation's
/// ``restoreState(_:)`` before it activates.
///
/// Old and new code are different builds, so the state crosses as JSON: if
/// the new `State` cannot decode what the old one saved (its shape changed),
/// the new generation starts fresh and the developer is told.
public protocol ReloadableState: AnyObject {
    /// What crosses the reload, as JSON.
    associatedtype State: Codable
    /// Called on the old generation when a reload starts, before the new one is created.
    func saveState() -> State
    /// Called on the new generation, after its init and before its activate.
    func restoreState(_ state: State)
}

extension ReloadableState {
    /// Host only: the saved state as JSON.
    @_spi(PlugboardHost)
    public func encodedState() throws -> [UInt8] {
        try JSONCoding.encode(saveState())
    }

    /// Host only: restores from JSON; throws if it does not decode.
    @_spi(PlugboardHost)
    public func restore(encodedState: [UInt8]) throws {
        restoreState(try JSONCoding.decode(State.self, from: encodedState))
    }
}
