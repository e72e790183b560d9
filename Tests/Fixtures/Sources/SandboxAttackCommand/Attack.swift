import CSandboxAttacks
import Foundation
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// The hostile fixtures' one command, `attack NAME ARG`: tries one thing a
/// sandbox must stop and answers `done DETAIL` when it worked or `refused
/// ERROR` when the system refused it. Each attack is bounded (a fixed
/// number of forks, reaped; a fixed byte count) and aims signals and
/// tracing at the decoy pid the test gives, never the runner.
/// The plugin both hostile fixtures export (each links its own copy, under
/// its own id and needs).
public final class AttackPlugin: Plugin {
    public init(context: PluginContext) throws {}
    public func activate() throws {}
    public func deactivate() {}
    public func contributions() -> [Contribution] { [.provider(Attack(), for: Commands.self)] }
}

public struct Attack: Command {
    public init() {}
    public var name: String { "attack" }
    public var summary: String { "tries what a sandbox must stop" }

    public func run(arguments: [String]) throws -> String {
        let argument = arguments.dropFirst().first ?? ""
        switch arguments.first ?? "" {
        case "read": return readFile(argument)
        case "write": return check(creat(argument, 0o600)) { close($0) }
        case "tcp": return connectTCP(port: UInt16(argument) ?? 0)
        case "udp": return sendUDP(port: UInt16(argument) ?? 0)
        case "abstract": return connectAbstract(argument)
        case "kill": return check(kill(pid_t(argument) ?? 0, SIGCONT))
        case "ptrace": return traceDecoy(pid_t(argument) ?? 0)
        case "memory": return readFile("/proc/\(argument)/mem", bytes: 16)
        case "environ": return readFile("/proc/\(getppid())/environ")
        case "exec": return spawn("/bin/true")
        case "fork": return forks(Int(argument) ?? 50)
        case "escape": return escape()
        case "chmod": return check(chmod(argument, 0o666))
        case "prlimit": return check(attack_prlimit_cpu(pid_t(argument) ?? 0))
        case "setown": return check(attack_setown(pid_t(argument) ?? 0))
        case "limits": return raiseDescriptorLimit()
        case "unshare": return check(attack_unshare())
        case "mount": return check(mount("none", argument, "tmpfs", 0, nil))
        case "mknod": return check(mknod(argument, S_IFIFO | 0o600, 0))
        case "fill": return fill(argument, bytes: 32 << 20)
        case "shm": return check(attack_shared_memory(Int(argument) ?? 1))
        case "mqueue": return check(attack_message_queue())
        case "threads": return "made \(attack_threads(Int32(argument) ?? 100)) threads"
        case "threads-held": return "made \(attack_threads_held(Int32(argument) ?? 100)) threads and woke"
        case "allocate": return "wrote \(attack_memory(Int(argument) ?? 64)) MiB"
        case "spin": return "spun \(attack_spin_until(argument)) rounds"
        default: return "unknown attack"
        }
    }

    func describe(_ code: Int32) -> String { "refused \(String(cString: strerror(code)))" }

    func check(_ result: Int32, then: (Int32) -> Void = { _ in }) -> String {
        if result < 0 { return describe(errno) }
        then(result)
        return "done"
    }

    func readFile(_ path: String, bytes: Int = 4096) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return describe(errno) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: bytes)
        if path.hasSuffix("/mem") {
            // The host's memory: the first mapped page of its program.
            let maps = (try? String(contentsOfFile: path.replacingOccurrences(of: "/mem", with: "/maps"), encoding: .utf8)) ?? ""
            let start = maps.split(separator: "-").first.flatMap { off_t($0, radix: 16) } ?? 0
            let count = pread(fd, &buffer, bytes, start)
            return count < 0 ? describe(errno) : "done \(count) bytes"
        }
        let count = read(fd, &buffer, bytes)
        return count < 0 ? describe(errno) : "done \(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self))"
    }

    func connectTCP(port: UInt16) -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return describe(errno) }
        defer { close(fd) }
        var address = loopback(port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return check(result)
    }

    func sendUDP(port: UInt16) -> String {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return describe(errno) }
        defer { close(fd) }
        var address = loopback(port)
        let message: [UInt8] = Array("sandbox-udp".utf8)
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, message, message.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return sent < 0 ? describe(errno) : "done"
    }

    func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    func connectAbstract(_ name: String) -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return describe(errno) }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [UInt8(0)] + Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in bytes.prefix(path.count).enumerated() { path[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) } }
        return check(result)
    }

    func traceDecoy(_ pid: pid_t) -> String { check(attack_ptrace(pid)) }

    func spawn(_ program: String) -> String {
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(program), nil]
        defer { arguments.forEach { free($0) } }
        let result = posix_spawn(&pid, program, nil, nil, arguments, environ)
        guard result == 0 else { return describe(result) }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        // A child that could not exec exits 127.
        return (status >> 8) & 0xff == 127 ? "refused exec" : "done"
    }

    func forks(_ count: Int) -> String {
        var made: [pid_t] = []
        var failure: Int32 = 0
        for _ in 0..<count {
            let pid = fork()
            if pid == 0 { _exit(0) }
            if pid < 0 {
                failure = errno
                break
            }
            made.append(pid)
        }
        for pid in made {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        return made.isEmpty ? describe(failure) : "done \(made.count) of \(count)"
    }

    /// A grandchild in a session of its own (out of the child's process
    /// group, which the host kills): it lives 2 s, then exits by itself.
    func escape() -> String {
        let child = fork()
        if child == 0 {
            setsid()
            if fork() == 0 {
                sleep(2)
                _exit(0)
            }
            _exit(0)
        }
        guard child > 0 else { return describe(errno) }
        var status: Int32 = 0
        waitpid(child, &status, 0)
        return "done"
    }

    func raiseDescriptorLimit() -> String {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        return check(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit))
    }

    func fill(_ path: String, bytes: Int) -> String {
        // An attacker ignores the signal a file-size limit sends.
        signal(SIGXFSZ, SIG_IGN)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return describe(errno) }
        defer {
            close(fd)
            unlink(path)
        }
        let chunk = [UInt8](repeating: 0x41, count: 1 << 20)
        var written = 0
        while written < bytes {
            let count = write(fd, chunk, chunk.count)
            if count < 0 { return written > 0 ? "refused \(String(cString: strerror(errno))) after \(written) bytes" : describe(errno) }
            written += count
        }
        return "done \(written) bytes"
    }
}
