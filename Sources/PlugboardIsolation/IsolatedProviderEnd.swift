@_spi(PlugboardHost) import Plugboard
import PlugboardCore

/// The host's end of one isolated provider: what its proxy calls.
struct IsolatedProviderEnd: SuspendingIsolatedProvider {
    let plugin: IsolatedPlugin
    let index: UInt32
    let interfaceID: String

    func call<Arguments: Encodable & Sendable, Result: Decodable & Sendable>(
        _ method: String, _ arguments: Arguments, returning: Result.Type
    ) throws -> Result {
        let reply = try plugin.call(index, interfaceID: interfaceID, method: method, arguments: arguments)
        do {
            return try CompactDecoder().decode(Result.self, from: reply)
        } catch {
            throw IsolatedCallError(.pluginProtocol, pluginID: plugin.pluginID, message: "its reply to \(method) does not decode as \(Result.self): \(error)")
        }
    }

    /// Suspends the caller: the call runs on the host's own call threads
    /// (``IsolatedCallPolicy/withoutBlocking(_:)``), cancelled with its task.
    func callSuspending<Arguments: Encodable & Sendable, Result: Decodable & Sendable>(
        _ method: String, _ arguments: Arguments, returning: Result.Type
    ) async throws -> Result {
        try await IsolatedCallPolicy.withoutBlocking { try call(method, arguments, returning: returning) }
    }
}
