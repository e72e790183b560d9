import Plugboard
import Testing

/// Expects `body` to throw a ``ServiceError`` with `code`; returns it for
/// checks of its message.
@discardableResult
func expectServiceError(
    _ code: ServiceError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> ServiceError? {
    let error = #expect(throws: ServiceError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
    return error
}
