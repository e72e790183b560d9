// plugboard-child: the process of an isolated plugin (docs/isolation.md).
// A host starts it, one per isolated plugin (or pool member); its C
// constructor (CPlugboardChild) applies the sandbox and serves the host
// before `main`, and never returns. SwiftPM builds it beside every program
// that depends on PlugboardHost, where the host looks for it
// (`Configuration.isolation.childProgram` names another place).
import CPlugboardChild
// Foundation is linked, so that it is the program's own: CoreFoundation
// takes the thread that first loads it for the main thread, and a plugin
// loads it on another (its main run loop then traps). Linked, the child's
// main thread runs its main run loop (plugboard_serve_main_queue).
import Foundation
import PlugboardIsolation
#if canImport(Glibc)
import Glibc
#endif

// Reached only when run by hand.
_ = plugboard_child_started_by_host()
// A use of Foundation, so the linker keeps the library (see above).
_ = ProcessInfo.processInfo.processIdentifier
let usage = """
    plugboard-child: the process of an isolated plugin, started by a host that runs plugins isolated
    (PluginHost.Configuration.isolation); it is not run by hand. A host looks for it beside its own
    executable, or where Configuration.isolation.childProgram says.
    exit: 64 (usage)

    """
_ = usage.withCString { write(2, $0, strlen($0)) }
exit(64)
