/// Wrong command-line input: printed with a usage hint, exit status 2.
struct UsageError: Error, Sendable {
    let message: String
    /// The command whose usage to point at.
    let command: String?
}
