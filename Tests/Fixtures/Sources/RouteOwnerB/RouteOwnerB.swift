import Plugboard
import FixtureSupport

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: RouteClaimer<RouteB>.self, id: "fixture.route-b", version: "1.0.0", provides: [], services: [Services.Router.id])
}
enum RouteB: FixtureName { static let name = "route-b" }
