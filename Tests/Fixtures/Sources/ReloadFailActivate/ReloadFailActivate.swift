import Plugboard
import FixtureSupport

enum V: ReloadVariant { static let version = "bad"; static let failActivate = true }
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer { reloadableDescriptor(Reloadable<V>.self) }
