import Plugboard
import FixtureSupport

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: RouteClaimer<RouteA>.self, id: "fixture.route-a", version: "1.0.0", provides: [], services: [Services.Router.id])
}
enum RouteA: FixtureName { static let name = "route-a" }
