/// An optional capability: any provider may also adopt it, and the host runs
/// every adopter's validation and aggregates the issues. Providers that do not
/// adopt it are simply skipped (interface segregation).
public protocol Validating: Sendable {
    /// Problems found; empty when valid.
    func validate() -> [ValidationIssue]
}

/// One problem reported by a ``Validating`` provider.
public struct ValidationIssue: Sendable, Hashable, Codable {
    /// What is invalid, e.g. `"coupon.code"`.
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}
