import Plugboard
import FixtureSupport

enum V: ReloadVariant { static let version = "v2" }
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer { reloadableDescriptor(Reloadable<V>.self) }
