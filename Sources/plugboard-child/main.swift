// plugboard-child: the process of an isolated plugin (docs/isolation.md).
// A host starts it, one per isolated plugin (or pool member); its C
// constructor (CPlugboardChild) applies the sandbox and serves the host
// before `main`, and never returns. SwiftPM builds it beside every program
// that depends on PlugboardHost, where the host looks for it
// (`Configuration.isolation.childProgram` names another place).
import CPlugboardChild
// Foundation is not linked (the lean child: 6 MiB of it and ICU per child
// for plugins that never use it). For one that does, the child's main
// thread loads it before the plugin (CoreFoundation takes the thread that
// first loads it for the main one) and runs its main run loop
// (plugboard_serve_main_queue).
import PlugboardIsolation
#if canImport(Glibc)
import Glibc
#endif

// Reached only when run by hand.
_ = plugboard_child_started_by_host()
let usage = """
    plugboard-child: the process of an isolated plugin, started by a host that runs plugins isolated
    (PluginHost.Configuration.isolation); it is not run by hand. A host looks for it beside its own
    executable, or where Configuration.isolation.childProgram says.
    exit: 64 (usage)

    """
_ = usage.withCString { write(2, $0, strlen($0)) }
exit(64)
