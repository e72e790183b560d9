import Plugboard
import FixtureSupport

enum V: ReloadVariant { static let version = "v1" }
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer { reloadableDescriptor(Reloadable<V>.self) }
