#if canImport(Glibc)
import Glibc
#endif

/// Signal names for messages (scanner quarantines, the child verifier).
package enum Signals {
    /// `SIGABRT`, ...; `signal N` for the others.
    package static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGABRT: "SIGABRT"
        case SIGSEGV: "SIGSEGV"
        case SIGBUS: "SIGBUS"
        case SIGILL: "SIGILL"
        case SIGTRAP: "SIGTRAP"
        case SIGFPE: "SIGFPE"
        case SIGKILL: "SIGKILL"
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGXCPU: "SIGXCPU (CPU time limit)"
        case SIGPIPE: "SIGPIPE"
        case SIGSYS: "SIGSYS"
        default: "signal \(signal)"
        }
    }
}
