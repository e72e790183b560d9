import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// Named POSIX semaphores a test and a fixture's `init` meet on (names from
/// the plugin's settings, unique per test): they synchronise on events, and
/// a wait that would never end is cut after 20 s and reported as an error,
/// so a serialised start fails the test instead of hanging it.
public enum StartGate {
    /// Posts `"/plugboard-<token>-<name>"`.
    public static func post(_ token: String, _ name: String) throws {
        let gate = try open(token, name)
        defer { sem_close(gate) }
        sem_post(gate)
    }

    /// Waits for a post of `"/plugboard-<token>-<name>"`, at most `patience` ms.
    public static func wait(_ token: String, _ name: String, _ what: String, patience: Int = 20_000) throws {
        let gate = try open(token, name)
        defer { sem_close(gate) }
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + (patience % 1000) * 1_000_000
        deadline.tv_sec += patience / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        while sem_timedwait(gate, &deadline) != 0 {
            guard errno == EINTR else { throw FixtureError(message: "waited \(patience) ms for \(what)") }
        }
    }

    private static func open(_ token: String, _ name: String) throws -> UnsafeMutablePointer<sem_t> {
        guard let gate = sem_open("/plugboard-\(token)-\(name)", O_CREAT, 0o600, 0), gate != SEM_FAILED else {
            throw FixtureError(message: "sem_open failed: errno \(errno)")
        }
        return gate
    }
}

/// Names a ``GatedPlugin`` and the partner it meets.
public protocol GateName: FixtureName { static var partner: String { get } }

/// A plugin whose `init` waits on gates its settings name: `rendezvous`
/// (a token) makes it post its own name and wait for its partner's, so it
/// starts only if the partner's `init` runs at the same time (waiting
/// `patience-ms`, 20,000 unless set); `hold` makes
/// it post `in` and wait for `go`. Its command `<name>` answers what
/// happened ("met b", "held", "alone").
public final class GatedPlugin<Name: GateName>: Plugin {
    let story: String

    public init(context: PluginContext) throws {
        let settings = try context.service(Services.Configuration.self)
        if let token = settings.string("rendezvous"), !token.isEmpty {
            try StartGate.post(token, Name.name)
            try StartGate.wait(token, Name.partner, "plugin \(Name.partner)'s init to run beside \(Name.name)'s",
                               patience: settings.int("patience-ms") ?? 20_000)
            story = "met \(Name.partner)"
        } else if let token = settings.string("hold"), !token.isEmpty {
            try StartGate.post(token, "in")
            try StartGate.wait(token, "go", "the test to let \(Name.name)'s init go on")
            story = "held"
        } else {
            story = "alone"
        }
    }

    /// Settings override only keys a plugin has defaults for.
    public static var defaultConfiguration: [String: ConfigValue] { ["rendezvous": .string(""), "hold": .string(""), "patience-ms": .int(20_000)] }

    public func contributions() -> [Contribution] {
        [.provider(EchoCommand(name: "\(Name.name): \(story)"), for: Commands.self)]
    }
}
