import Foundation
import Plugboard
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An isolated plugin's routes (registered with `Router.serve`) are in the
/// host's table and answer requests by calling its child: the same answers
/// as in process, and a crash the host can turn into a 5xx.
@Suite struct IsolatedRouteTests {
    /// A host of the RouteServer fixture, with a route of its own (`/taken`)
    /// that the plugin also tries to register.
    func host(_ dir: TemporaryDirectory, isolation: PluginIsolation) throws -> PluginHost {
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try FileManager.default.copyItem(atPath: Fixtures.library("RouteServer").path, toPath: dir.file("plugins/routes.so"))
        var configuration = PluginHost.Configuration.with(pluginsDirectory: dir.file("plugins"), cacheDirectory: dir.file("cache"))
        configuration.isolation.others = isolation
        let host = PluginHost(configuration: configuration)
        try host.router.serve("/taken") { _ in RouteResponse(text: "the host's") }
        try host.start()
        return host
    }

    func text(_ response: RouteResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    func code(of body: () throws -> RouteResponse) -> String {
        do {
            _ = try body()
            return "answered"
        } catch let error as IsolatedCallError {
            return error.code.rawValue
        } catch let error as ServiceError {
            return error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    /// The same request gets the same response in process, isolated,
    /// sandboxed and in a pool of two children.
    @Test(arguments: [PluginIsolation.inProcess, .isolated, .sandboxed, PluginIsolation(isolated: true, children: 2)])
    func routesAnswerTheSameInProcessAndIsolated(isolation: PluginIsolation) throws {
        let dir = try TemporaryDirectory()
        let host = try host(dir, isolation: isolation)
        defer { host.shutdown() }
        let request = RouteRequest(
            method: "POST", path: "/orders/42", parameters: ["customer": "ada", "id": "replaced by the capture"],
            headers: [RouteHeader("X-Trace", "t-1")], body: Array("two coffees".utf8))
        let response = try host.router.respond(to: request)
        #expect(response.status == 201)
        #expect(response.headers == [RouteHeader("X-Method", "POST"), RouteHeader("X-Order", "42"), RouteHeader("X-Trace", "t-1")])
        #expect(text(response) == "order 42 of ada: two coffees")
        #expect(host.routes.contains(PluginHost.Route(pattern: "/orders/{id}", plugin: "fixture.route-server")))
        let pid = text(try host.router.respond(to: RouteRequest(path: "/pid")))
        #expect((pid == String(getpid())) == !isolation.isolated, "served in \(isolation.isolated ? "a child" : "the host")")
        // The host's table decides conflicts, for a child's registration too.
        #expect(text(try host.router.respond(to: RouteRequest(path: "/registration"))) == "route-conflict")
        // The same pattern twice from one plugin is a conflict, isolated too.
        #expect(text(try host.router.respond(to: RouteRequest(path: "/registration-again"))) == "route-conflict")
        #expect(text(try host.router.respond(to: RouteRequest(path: "/taken"))) == "the host's")
        #expect(code { try host.router.respond(to: RouteRequest(path: "/nowhere")) } == "route-not-found")
    }

    /// A crash in a route handler fails that request with `plugin-crashed`;
    /// other routes keep serving, and the next request restarts the child,
    /// whose routes stand again.
    @Test func aCrashInARouteHandlerIsPluginCrashed() throws {
        let dir = try TemporaryDirectory()
        let host = try host(dir, isolation: .isolated)
        defer { host.shutdown() }
        let before = text(try host.router.respond(to: RouteRequest(path: "/pid")))
        #expect(code { try host.router.respond(to: RouteRequest(path: "/crash")) } == "plugin-crashed")
        #expect(text(try host.router.respond(to: RouteRequest(path: "/taken"))) == "the host's")
        let after = text(try host.router.respond(to: RouteRequest(path: "/pid")))
        #expect(after != before && Int(after) != nil, "a new child serves")
        #expect(text(try host.router.respond(to: RouteRequest(path: "/orders/7"))).hasPrefix("order 7"))
        let snapshot = try #require(host.snapshot().first { $0.id == "fixture.route-server" })
        #expect(snapshot.crashes == 1 && snapshot.isolation?.restarts == 1)
    }

    /// Bodies over the message limit are refused with a code, either way,
    /// and the child lives on; a handler's error reaches the host.
    @Test func oversizedBodiesAndErrorsHaveTheirCodes() throws {
        let dir = try TemporaryDirectory()
        let host = try host(dir, isolation: .isolated)
        defer { host.shutdown() }
        let pid = text(try host.router.respond(to: RouteRequest(path: "/pid")))
        let limit = IsolationProtocol.maximumFrame
        #expect(code { try host.router.respond(to: RouteRequest(method: "PUT", path: "/orders/1", body: [UInt8](repeating: 1, count: limit))) }
            == "isolated-call-too-large")
        #expect(code { try host.router.respond(to: RouteRequest(path: "/big/\(limit)")) } == "isolated-call-too-large")
        #expect(try host.router.respond(to: RouteRequest(path: "/big/1000")).body.count == 1000)
        #expect(code { try host.router.respond(to: RouteRequest(path: "/throws")) } == "plugin-threw")
        // What a server would pass on as HTTP must be HTTP: a child is not trusted.
        #expect(code { try host.router.respond(to: RouteRequest(path: "/bad-status")) } == "plugin-protocol-violation")
        #expect(code { try host.router.respond(to: RouteRequest(path: "/bad-header")) } == "plugin-protocol-violation")
        // A plain destination cannot leave the child: refused, saying why.
        do {
            _ = try host.router.respond(to: RouteRequest(path: "/screen"))
            Issue.record("a plain destination crossed")
        } catch let error as IsolatedCallError {
            #expect(error.code == .pluginThrew && error.message.contains("Router.serve"))
        }
        #expect(text(try host.router.respond(to: RouteRequest(path: "/pid"))) == pid, "the same child throughout")
    }

    /// Requests keep being answered across live replacements of an
    /// isolated plugin serving them, and an endpoint taken before them
    /// reaches the newest child (its requests are forwarded).
    @Test func aLiveReplacementLosesNoRequest() throws {
        let dir = try TemporaryDirectory()
        let host = try host(dir, isolation: .isolated)
        defer { host.shutdown() }
        let taken = try host.router.navigate(to: "/pid", as: RouteEndpoint.self)
        let old = text(try taken.respond(to: RouteRequest(path: "/pid")))
        let (failures, requests) = callsLooping(during: {
            for _ in 0..<3 {
                let outcome = host.reload("fixture.route-server", from: dir.file("plugins/routes.so"))
                #expect(outcome.error == nil, "\(outcome)")
            }
        }) { index in
            let answer = text(try host.router.respond(to: RouteRequest(path: "/orders/\(index)")))
            return answer.hasPrefix("order \(index)") ? nil : answer
        }
        #expect(failures == [], "of \(requests) requests")
        let newest = text(try taken.respond(to: RouteRequest(path: "/pid")))
        let current = text(try host.router.respond(to: RouteRequest(path: "/pid")))
        #expect(newest != old && newest == current, "the endpoint taken first reaches the newest child")
    }

    /// A child is not trusted: a route registration relayed for a plugin
    /// that did not declare the router (what only a hostile child sends;
    /// the SDK refuses it in the child) is refused by the host, and the
    /// host's table gets no route.
    @Test func aRouteRelayedForAPluginWithoutTheRouterIsRefused() throws {
        let dir = try TemporaryDirectory()
        let host = try IsolationTests().host(dir)
        defer { host.shutdown() }
        _ = try IsolationTests().fault(host, "pid")
        let plugin = try #require(host.lifecycle.livePlugin("fixture.isolation-faults")?.isolated)
        let answer = plugin.relay(HostRelay.Request(sequence: 1, operation: .route, key: "/stolen", value: []), from: 0)
        #expect(answer.code == "service-not-declared")
        #expect(!host.routes.contains { $0.pattern == "/stolen" })
        #expect(code { try host.router.respond(to: RouteRequest(path: "/stolen")) } == "route-not-found")
    }
}
