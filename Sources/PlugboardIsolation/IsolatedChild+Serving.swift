import CPlugboardHost
import Dispatch
import FoundationEssentials
@_spi(PlugboardHost) import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardAdmission
import PlugboardServices
import PlugboardLoading

/// The child serving the host: calls, routes, events, state, and its answers.
extension IsolatedChild {
    func serve(_ frame: FrameChannel.Frame) async {
        let payload = frame.payload
        guard payload.count >= 6 else { return reportThrew(frame.sequence, "a call without its header") }
        let base = payload.startIndex
        let index = UInt32(payload.littleEndian(at: base, count: 4))
        let methodLength = Int(payload.littleEndian(at: base + 4, count: 2))
        guard index == IsolationProtocol.routeIndex || index < providers.count, payload.count >= 6 + methodLength else {
            return reportThrew(frame.sequence, "a call for provider \(index), which this child does not have")
        }
        let method = String(decoding: payload[(base + 6)..<(base + 6 + methodLength)], as: UTF8.self)
        let call = ChildCall(method: method, arguments: payload[(base + 6 + methodLength)...])
        do {
            if index == IsolationProtocol.routeIndex {
                try serveRoute(call)
            } else {
                let (crossing, provider) = providers[Int(index)]
                try await crossing.serve(call, provider)
            }
        } catch {
            return reportThrew(frame.sequence, String(describing: error))
        }
        if call.unknownMethod {
            answer(.unknownMethod, frame.sequence, Array(method.utf8))
        } else if let result = call.result, result.count + 64 > IsolationProtocol.maximumFrame {
            answer(.replyTooLarge, frame.sequence, Array("its reply to '\(method)' takes \(result.count) bytes, over the limit of \(IsolationProtocol.maximumFrame) per message".utf8))
        } else if let result = call.result {
            answer(.reply, frame.sequence, result)
        } else {
            reportThrew(frame.sequence, "the provider's serve(_:on:) for '\(method)' returned without replying")
        }
    }

    /// A call for the route whose pattern is the call's method: the
    /// handler the plugin registered for it must lead to a ``RouteEndpoint``.
    private func serveRoute(_ call: ChildCall) throws {
        guard let (match, request) = RouteWire.request(from: call.argumentBytes, pattern: call.method) else {
            throw RouteRefused(reason: "the host's request for route '\(call.method)' does not decode")
        }
        guard let handler = router.handler(for: call.method) else {
            throw RouteRefused(reason: "route '\(call.method)' has no handler in this child: the plugin no longer registers it when it starts")
        }
        guard let endpoint = try handler(match) as? RouteEndpoint else {
            throw RouteRefused(reason: "route '\(call.method)' leads to a destination that cannot leave the child; an isolated plugin's routes answer requests: register them with Router.serve(_:_:)")
        }
        call.result = RouteWire.response(try endpoint.respond(to: request))
    }

    struct RouteRefused: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// An event the host forwarded: delivered to the plugin's handlers here,
    /// inside the chain the host was delivering (minus the event itself,
    /// which this delivery adds back).
    func deliver(_ payload: ArraySlice<UInt8>) {
        guard let services, let event = CrossingEvent(payload) else { return }
        _ = EventHub.within(Array(event.chain.dropLast())) { services.events.publish(event.payload, from: .host) }
    }

    func sendState(_ sequence: UInt64) {
        var bytes: [UInt8] = []
        var kind = IsolationProtocol.Kind.state
        if let stateful = plugin as? any ReloadableState {
            do {
                bytes = try stateful.encodedState()
            } catch {
                kind = .threw
                bytes = Array("state not saved by the old generation (\(error))".utf8)
            }
        } else {
            kind = .threw
            bytes = Array("the plugin does not adopt ReloadableState".utf8)
        }
        answer(kind, sequence, bytes)
    }

    func reportThrew(_ sequence: UInt64, _ message: String) {
        answer(.threw, sequence, Array(message.utf8))
    }

    /// Answers a request being served: the last act for it, so it no
    /// longer counts as served. (The host may stop the child as soon as it
    /// reads the last answer; the watcher must then leave the end of the
    /// stream to the main loop, which deactivates the plugin, rather than
    /// kill a child it still believes busy.)
    func answer(_ kind: IsolationProtocol.Kind, _ sequence: UInt64, _ payload: [UInt8]) {
        serving.subtract(1, ordering: .releasing)
        _ = channel.send(kind.rawValue, sequence: sequence, payload: payload)
    }

    func send<Value: Encodable>(_ kind: IsolationProtocol.Kind, _ sequence: UInt64, _ value: Value) {
        guard let payload = try? CompactEncoder().encode(value) else { _exit(70) }
        _ = channel.send(kind.rawValue, sequence: sequence, payload: payload)
    }

    /// Tells the host why the plugin cannot start, and ends the process.
    func fail(_ sequence: UInt64, _ code: String, _ reason: String) -> Never {
        send(.startFailed, sequence, IsolationProtocol.StartFailure(code: code, reason: reason))
        _exit(0)
    }
}

/// One call as the child received it.
private final class ChildCall: IsolatedCall {
    let method: String
    let argumentBytes: ArraySlice<UInt8>
    var result: [UInt8]?
    var unknownMethod = false

    init(method: String, arguments: ArraySlice<UInt8>) {
        self.method = method
        self.argumentBytes = arguments
    }

    func arguments<Arguments: Decodable>(_ type: Arguments.Type) throws -> Arguments {
        try CompactDecoder().decode(type, from: argumentBytes)
    }

    func reply<Result: Encodable>(_ result: Result) throws {
        self.result = try CompactEncoder().encode(result)
    }

    func replyUnknownMethod() throws {
        unknownMethod = true
    }
}
