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
        try decoded(plugin.call(index, interfaceID: interfaceID, method: method, arguments: arguments), of: method)
    }

    /// Suspends the caller: its task sends the call and is resumed with the
    /// reply (IsolatedPlugin+Suspending.swift), cancelled with its task.
    func callSuspending<Arguments: Encodable & Sendable, Result: Decodable & Sendable>(
        _ method: String, _ arguments: Arguments, returning: Result.Type
    ) async throws -> Result {
        try decoded(await plugin.callSuspending(index, interfaceID: interfaceID, method: method, arguments: arguments), of: method)
    }

    private func decoded<Result: Decodable>(_ reply: ArraySlice<UInt8>, of method: String) throws -> Result {
        do {
            return try CompactDecoder().decode(Result.self, from: reply)
        } catch {
            throw IsolatedCallError(.pluginProtocol, pluginID: plugin.pluginID, message: "its reply to \(method) does not decode as \(Result.self): \(error)")
        }
    }
}
