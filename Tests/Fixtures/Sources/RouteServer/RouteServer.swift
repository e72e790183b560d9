import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// Serves routes, in process or isolated alike (`Router.serve`):
/// - `/orders/{id}` echoes the request: its method, capture, a header and body;
/// - `/pid` answers the process serving it;
/// - `/crash` dies, `/throws` throws;
/// - `/big/{bytes}` answers a body of that many bytes;
/// - `/screen` is a plain destination (`register`), which cannot cross;
/// - `/registration` tells how the registration of `/taken` went, and
///   `/registration-again` how a second one of `/pid` did;
/// - `/bad-status` and `/bad-header` answer what no HTTP server may send.
final class RouteServer: Plugin {
    let router: any Router

    init(context: PluginContext) throws {
        router = try context.service(Services.Router.self)
    }

    func activate() throws {
        try router.serve("/orders/{id}") { request in
            RouteResponse(
                status: 201,
                headers: [RouteHeader("X-Method", request.method), RouteHeader("X-Order", request.parameters["id"] ?? "none"),
                          RouteHeader("X-Trace", request.header("x-trace") ?? "none")],
                body: Array("order \(request.parameters["id"] ?? "?") of \(request.parameters["customer"] ?? "nobody"): ".utf8) + request.body)
        }
        try router.serve("/pid") { _ in RouteResponse(text: "\(getpid())") }
        try router.serve("/crash") { _ in fatalError("RouteServer: crashing in a route handler on purpose") }
        try router.serve("/throws") { _ in throw Refusal() }
        try router.serve("/big/{bytes}") { request in
            RouteResponse(body: [UInt8](repeating: 7, count: Int(request.parameters["bytes"] ?? "") ?? 0))
        }
        try router.register("/screen") { _ in "a screen" }
        var outcome = "registered"
        do {
            try router.serve("/taken") { _ in RouteResponse(text: "mine") }
        } catch {
            outcome = error.code.rawValue
        }
        try router.serve("/registration") { [outcome] _ in RouteResponse(text: outcome) }
        var again = "registered"
        do {
            try router.serve("/pid") { _ in RouteResponse(text: "a second handler") }
        } catch {
            again = error.code.rawValue
        }
        try router.serve("/registration-again") { [again] _ in RouteResponse(text: again) }
        try router.serve("/bad-status") { _ in RouteResponse(status: 1_000) }
        try router.serve("/bad-header") { _ in RouteResponse(headers: [RouteHeader("X-Split", "a\r\nSet-Cookie: b")]) }
    }

    func contributions() -> [Contribution] { [] }

    struct Refusal: Error, CustomStringConvertible {
        var description: String { "no such order" }
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: RouteServer.self, id: "fixture.route-server", version: "1.0.0", provides: [], services: [Services.Router.id], activation: [.startup])
}
