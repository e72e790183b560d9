import FixtureSupport
import Plugboard

/// Provides nothing; activated by a route under `/lazy`, which it registers.
final class LazyRoute: Plugin {
    let router: any Router
    init(context: PluginContext) throws { router = try context.service(Services.Router.self) }
    func activate() throws {
        try router.register("/lazy/{id}") { match in ["lazy", match.parameters["id"] ?? ""] }
    }
    func contributions() -> [Contribution] { [] }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: LazyRoute.self, id: "fixture.lazy-route", version: "1.0.0", provides: [],
        services: [Services.Router.id], activation: [.route(prefix: "/lazy")])
}
