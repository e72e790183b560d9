import Plugboard
import FixtureSupport

enum V: ReloadVariant { static let version = "crash"; static let crashInInit = true }
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer { reloadableDescriptor(Reloadable<V>.self) }
