/// Why a host service refused or failed a plugin's request: getting a
/// service, storing a value, registering or following a route.
///
/// One struct for every service, with an extensible ``Code`` (as swift-nio's
/// `FileSystemError`): a host or a later SDK adds codes without breaking a
/// plugin that switches over them. Match on ``code``; show ``description``.
///
/// ```swift
/// do {
///     try router.register("/coupons/{code}") { match in ... }
/// } catch {
///     if error.code == .routeConflict { log.warning("\(error)") }
/// }
/// ```
///
/// A host adds codes of its own with ``Code/init(_:)``; prefix them with the
/// service's name (`quota-exceeded` would be `storage-quota-exceeded`).
public struct ServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable code, such as `service-not-declared`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's text; stable across releases.
        public let rawValue: String
        /// A code of your own (a host's service may add some).
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The plugin asked for a service it did not list in `services:`.
        public static var serviceNotDeclared: Code { Code("service-not-declared") }
        /// The host's configuration denies this service to this plugin.
        public static var serviceDenied: Code { Code("service-denied") }
        /// The host offers no such service.
        public static var serviceUnavailable: Code { Code("service-unavailable") }
        /// A storage key is empty or too long.
        public static var storageInvalidKey: Code { Code("storage-invalid-key") }
        /// The host's storage cannot be written.
        public static var storageNotWritable: Code { Code("storage-not-writable") }
        /// A stored value cannot be read.
        public static var storageUnreadable: Code { Code("storage-unreadable") }
        /// The plugin's storage folder or a value file is a symbolic link or
        /// another kind of file the host does not follow; nothing is read or
        /// written through it. (SDK 2.1)
        public static var storageSymlink: Code { Code("storage-symlink") }
        /// The write would take the plugin past its storage quota (bytes,
        /// keys or value size, set by the host); nothing was written. (SDK 2.1)
        public static var storageQuotaExceeded: Code { Code("storage-quota-exceeded") }
        /// A stored value, or the plugin's storage folder, is not a plain
        /// file (or folder) of its own: a FIFO, a device, a socket, a folder,
        /// or a file with other hard links. Nothing is read or written
        /// through it. (SDK 2.1)
        public static var storageNotAFile: Code { Code("storage-not-a-file") }
        /// A route pattern is malformed.
        public static var routeInvalidPattern: Code { Code("route-invalid-pattern") }
        /// Another plugin registered the same route pattern first.
        public static var routeConflict: Code { Code("route-conflict") }
        /// No registered pattern matches the path.
        public static var routeNotFound: Code { Code("route-not-found") }
        /// The handler of the matching route threw.
        public static var routeHandlerFailed: Code { Code("route-handler-failed") }
        /// The destination is not of the type the caller asked for.
        public static var routeDestinationType: Code { Code("route-destination-type") }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong and, where there is one, what to do about it.
    public let message: String
    /// What the failure is about, where there is one: the storage file or
    /// directory that could not be read or written, or the route pattern or
    /// path. Nil otherwise (a service id or a key is named in ``message``).
    public let path: String?

    /// An error with `code`; `message` says what went wrong and what to do.
    public init(_ code: Code, _ message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    /// The ``message``.
    public var description: String { message }
}
