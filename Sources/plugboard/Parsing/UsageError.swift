/// Wrong command-line input: printed with the usage line, exit status 64.
struct UsageError: Error, Sendable {
    let message: String
    /// The command whose usage to point at.
    let command: String?
}
