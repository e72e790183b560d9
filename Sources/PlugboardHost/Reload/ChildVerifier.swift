import Foundation

/// Runs a new build in a throwaway child process before the host loads it,
/// so code that crashes (`fatalError`, a bad pointer) in its initializers,
/// init or activate takes down the child, not the host.
///
/// The child is any command that loads the file given as its last argument
/// and exits 0 or 1 when the load ran (the plugin may still be rejected or
/// fail: the host finds that out itself); `plugboard inspect --activate --data DIR FILE`
/// is one. A signal, a timeout or any other status fails verification.
public struct ChildVerifier: Sendable {
    public let executable: String
    public let arguments: [String]
    /// Longest time the child may take.
    public let timeout: Double

    public init(executable: String, arguments: [String] = [], timeout: Double = 30) {
        self.executable = executable
        self.arguments = arguments
        self.timeout = timeout
    }

    /// nil if the child ran to a normal exit; otherwise what went wrong.
    func verify(_ file: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments + [file]
        let output = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = output
        // Set before run(): a child that exits at once must still be seen.
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        do {
            try process.run()
        } catch {
            return "cannot start verifier \(executable): \(error)"
        }
        // Read stderr on the side, so a child that hangs with it open still times out.
        let collected = Locked(Data())
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            collected.withLock { $0 = data }
            drained.signal()
        }
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)  // not SIGTERM: the child may ignore it
            finished.wait()
            return "verifier did not finish within \(Int(timeout)) s"
        }
        _ = drained.wait(timeout: .now() + 1)
        let stderrData = collected.withLock { $0 }
        let tail = String(decoding: stderrData, as: UTF8.self)
            .split(separator: "\n").suffix(3).joined(separator: " | ")
        switch process.terminationReason {
        case .uncaughtSignal:
            let signal = process.terminationStatus
            let name = Signals.explained(signal)
            return "signal \(signal)\(name.hasPrefix("signal") ? "" : " \(name)")\(tail.isEmpty ? "" : ": \(tail)")"
        case .exit where process.terminationStatus > 1:
            return "verifier exited with status \(process.terminationStatus)\(tail.isEmpty ? "" : ": \(tail)")"
        default:
            return nil
        }
    }
}
