/// Wrong command-line input: printed with the usage line, exit status 64.
package struct UsageError: Error, Sendable {
    package let message: String
    /// The command whose usage to point at.
    package let command: String?

    package init(message: String, command: String?) {
        self.message = message
        self.command = command
    }
}
