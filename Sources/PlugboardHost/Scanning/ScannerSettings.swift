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

    public init(executable: String? = nil, timeout: Duration = .seconds(10), parallelism: Int? = nil, filesPerProcess: Int = 64) {
        self.executable = executable
        self.timeout = timeout
        self.parallelism = parallelism
        self.filesPerProcess = filesPerProcess
    }
}
