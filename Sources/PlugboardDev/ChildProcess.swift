import CPlugboardHost
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program the dev tools run and wait for (`swift build`, a bisect's
/// check): `posix_spawn` in a process group of its own, so the whole group
/// can be stopped. What Foundation's `Process` did for them, without
/// loading Foundation.
package struct ChildProcess: Sendable {
    /// Where a child's output goes.
    package enum Output: Sendable {
        /// `/dev/null`.
        case discarded
        /// A pipe, read to its end.
        case captured
    }

    /// How a child ended.
    package struct Ending: Sendable {
        /// Its exit status, or the signal that ended it.
        package var status: Int32
        /// Whether a signal ended it.
        package var signalled: Bool
        /// Its standard output (and its errors, when they are merged), if captured.
        package var output: [UInt8] = []
        /// Its standard error, if captured apart.
        package var errors: [UInt8] = []
    }

    package struct SpawnError: Error, CustomStringConvertible {
        package let path: String
        package let code: Int32
        /// What failed: `start`, or `wait for` (SIGCHLD ignored, say).
        package var action = "start"
        package var description: String { "\(path): cannot \(action) it (\(String(cString: strerror(code))))" }
    }

    /// Runs `path` with `arguments`, in `environment` (nil: this process's),
    /// standard input from `/dev/null`; `errors` nil merges standard error
    /// into `output`. `started` gets the child's pid (its group's id too).
    package static func run(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil,
        output: Output, errors: Output?, started: (pid_t) -> Void = { _ in }
    ) throws(SpawnError) -> Ending {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        // Every signal's default action: a dev session ignores some, and
        // ignored signals survive exec.
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)

        var outputPipe: [Int32] = [-1, -1], errorPipe: [Int32] = [-1, -1]
        defer { for fd in outputPipe + errorPipe where fd >= 0 { close(fd) } }
        switch output {
        case .discarded: posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        case .captured:
            guard plugboard_pipe_cloexec(&outputPipe) == 0 else { throw SpawnError(path: path, code: errno) }
            posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        }
        switch errors {
        case nil: posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .discarded: posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .captured:
            guard plugboard_pipe_cloexec(&errorPipe) == 0 else { throw SpawnError(path: path, code: errno) }
            posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
        }

        // Nothing else this process has open reaches the child (Process closed them too).
        plugboard_spawn_close_from(&actions, 3)

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let variables = environment.map { $0.map { "\($0.key)=\($0.value)" } }
        let envp = variables.map { $0.map { strdup($0) } + [nil] }
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp ?? [] { free(pointer) }
        }
        var pid = pid_t()
        let code = envp.map { envp in posix_spawn(&pid, path, &actions, &attributes, argv, envp) }
            ?? posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard code == 0 else { throw SpawnError(path: path, code: code) }
        started(pid)
        // The parent's copies of the write ends: the reads below end when the child's do.
        for index in [1] {
            if outputPipe[index] >= 0 { close(outputPipe[index]); outputPipe[index] = -1 }
            if errorPipe[index] >= 0 { close(errorPipe[index]); errorPipe[index] = -1 }
        }
        // Both pipes drained at once, so a child that fills one is not stuck.
        let errorBytes = Mutex<[UInt8]>([])
        let drained = DispatchSemaphore(value: 0)
        let errorFD = errorPipe[0]
        if errorFD >= 0 {
            DispatchQueue.global().async {
                let bytes = readAll(errorFD)
                errorBytes.withLock { $0 = bytes }
                drained.signal()
            }
        }
        var ending = Ending(status: 0, signalled: false)
        if outputPipe[0] >= 0 { ending.output = readAll(outputPipe[0]) }
        if errorFD >= 0 {
            drained.wait()
            ending.errors = errorBytes.withLock { $0 }
        }
        var status: Int32 = 0
        var waited: pid_t
        repeat { waited = waitpid(pid, &status, 0) } while waited < 0 && errno == EINTR
        // Not reaped (SIGCHLD ignored by whoever started this process): no
        // status to report, rather than a success nobody saw.
        guard waited == pid else { throw SpawnError(path: path, code: errno, action: "wait for") }
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import.
        let signal = status & 0x7F
        ending.signalled = signal != 0 && signal != 0x7F
        ending.status = ending.signalled ? signal : (status >> 8) & 0xFF
        return ending
    }

    private static func readAll(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count > 0 { bytes += buffer[0..<count] } else if count < 0 && errno == EINTR { continue } else { break }
        }
        return bytes
    }
}
