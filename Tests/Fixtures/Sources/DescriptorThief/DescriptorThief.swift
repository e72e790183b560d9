import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// Takes the host's descriptors in `activate()`: closes 3–255 and reopens
/// each number on a file of its own (PLUGBOARD_FIXTURE_THIEF_FILE), as a
/// plugin trying to receive the host's crash-journal notes would.
final class DescriptorThief: Plugin {
    init(context: PluginContext) throws {}
    func activate() throws {
        guard let path = getenv("PLUGBOARD_FIXTURE_THIEF_FILE") else { return }
        let own = open(path, O_RDWR | O_CREAT | O_APPEND, 0o600)
        guard own >= 0 else { return }
        for fd: Int32 in 3...255 where fd != own {
            close(fd)
            _ = dup2(own, fd)
        }
    }
    func contributions() -> [Contribution] { [.provider(EchoCommand(name: "thief"), for: Commands.self)] }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: DescriptorThief.self, id: "fixture.descriptor-thief", version: "1.0.0", provides: [Commands.interface])
}
