import Plugboard
import FixtureSupport

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer { reloadableDescriptor(ReshapedState.self) }
