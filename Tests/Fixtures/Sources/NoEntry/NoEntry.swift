import Plugboard
import FixtureSupport
// A Swift dynamic library that is not a plugin: no plugboard_entry.
public func notAPlugin() -> Int { 42 }
