import CPlugboardHost
import Dispatch
import PlugboardHost
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
        var outputPipe: [Int32] = [-1, -1], errorPipe: [Int32] = [-1, -1]
        defer { for fd in outputPipe + errorPipe where fd >= 0 { close(fd) } }
        if output == .captured, plugboard_pipe_cloexec(&outputPipe) != 0 { throw SpawnError(path: path, code: errno) }
        if errors == .captured, plugboard_pipe_cloexec(&errorPipe) != 0 { throw SpawnError(path: path, code: errno) }

        // Standard input, the signals, the process group and closing every
        // other descriptor are the spawn every child of Plugboard gets.
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        switch output {
        case .discarded: posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        case .captured: posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        }
        switch errors {
        case nil: posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .discarded: posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .captured: posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
        }

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp ?? [] { free(pointer) }
        }
        var pid = pid_t()
        let code = envp.map { plugboard_spawn_child(path, argv, $0, &actions, 3, &pid) }
            ?? plugboard_spawn_child(path, argv, environ, &actions, 3, &pid)
        guard code == 0 else { throw SpawnError(path: path, code: code) }
        started(pid)
        // The parent's copies of the write ends: the reads below end when the child's do.
        if outputPipe[1] >= 0 { close(outputPipe[1]); outputPipe[1] = -1 }
        if errorPipe[1] >= 0 { close(errorPipe[1]); errorPipe[1] = -1 }
        // Both pipes drained at once, so a child that fills one is not stuck.
        let errorBytes = Mutex<[UInt8]>([])
        let drained = DispatchSemaphore(value: 0)
        let errorFD = errorPipe[0]
        if errorFD >= 0 {
            DispatchQueue.global().async {
                let bytes = readToEnd(errorFD) ?? []
                errorBytes.withLock { $0 = bytes }
                drained.signal()
            }
        }
        var ending = Ending(status: 0, signalled: false)
        if outputPipe[0] >= 0 { ending.output = readToEnd(outputPipe[0]) ?? [] }
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
        ending.signalled = WaitStatus.signaled(status)
        ending.status = ending.signalled ? WaitStatus.signal(status) : WaitStatus.exitCode(status)
        return ending
    }
}
