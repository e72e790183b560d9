import PlugboardCore

/// How a host starts and limits its scanner processes.
///
/// By default the host starts *itself* as scanner: any executable that links
/// PlugboardHost becomes a scanner when started with `PLUGBOARD_SCANNER=1`
/// (a constructor in the library takes over before `main`, so a host author
/// writes nothing for it). Set ``executable`` when the host's own program
/// cannot be restarted that way (a host library loaded into a foreign
/// process, say): any executable that links PlugboardHost will do, such as
/// the `plugboard` tool.
public struct ScannerSettings: Sendable {
    /// The program to start as scanner; nil: this program (`/proc/self/exe`).
    public var executable: String?
    /// Longest time one file's scan may take (wall clock; the child's CPU
    /// time limit is the same number of seconds).
    public var timeout: Duration
    /// Scanner processes at once; nil: one per active core.
    public var parallelism: Int?
    /// A scanner process is replaced after this many files (it keeps every
    /// image it loaded: Swift images are never unloaded).
    public var filesPerProcess: Int
    /// The host's environment variables a scanner process gets; it gets no
    /// other (a plugin's constructors run there and must not read the host's
    /// tokens or keys). Add a variable a plugin needs while it is loaded.
    public var environment: [String]
    /// Variables given to scanner processes with these values, besides those
    /// passed through from the host's environment by ``environment`` (a value
    /// here wins over a passed-through one of the same name). The host's own
    /// environment is not changed: this is how one host gives its scanners a
    /// setting that another host in the same process must not see.
    /// `PLUGBOARD_SCANNER` and `SWIFT_BACKTRACE` are set by the host and
    /// cannot be overridden here.
    public var extraEnvironment: [String: String]
    /// The scanners' sandbox (docs/sandbox.md): the strongest this kernel
    /// offers, with no grants, so a constructor that runs during a scan
    /// cannot read the user's files, write outside the scanner's scratch
    /// space or reach the network. Best effort by default: where a layer is
    /// missing, scanning goes on, the gap is reported and the host tainted;
    /// `.required` makes every scan `unavailable` there instead. nil: no
    /// sandbox (not advised).
    public var sandbox: PluginSandbox? = PluginSandbox(enforcement: .bestEffort)
    /// The policy scanners get, set by the host from its folders.
    package var policy: SandboxPolicy?
    /// Hears a scanner whose sandbox missed a layer (best effort).
    package var onSandboxGap: (@Sendable (String) -> Void)?
    /// Makes the folders the policy names before a scanner starts (a rule
    /// for a folder that does not exist yet is dropped).
    package var preparePolicy: (@Sendable () -> Void)?

    /// What scanners get by default: where programs and libraries are found
    /// (the scanner must load the same libraries as the host), the locale,
    /// the time zone and the temporary directory.
    public static let defaultEnvironment = ["PATH", "LD_LIBRARY_PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TMPDIR"]

    public init(
        executable: String? = nil, timeout: Duration = .seconds(10), parallelism: Int? = nil, filesPerProcess: Int = 64,
        environment: [String] = ScannerSettings.defaultEnvironment, extraEnvironment: [String: String] = [:]
    ) {
        self.environment = environment
        self.extraEnvironment = extraEnvironment
        self.executable = executable
        self.timeout = timeout
        self.parallelism = parallelism
        self.filesPerProcess = filesPerProcess
    }

    /// The variables a scanner gets with their values: ``extraEnvironment``
    /// and its sandbox policy.
    package func childEnvironment() -> [String: String] {
        if policy != nil { preparePolicy?() }
        var environment = extraEnvironment
        environment[SandboxPolicy.variable] = policy?.encoded
        return environment
    }

    /// The program started as scanner: ``executable``, else this program.
    package var program: String { executable ?? "/proc/self/exe" }
}
