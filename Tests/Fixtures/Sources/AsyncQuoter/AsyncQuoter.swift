import DemoInterfaces
import Foundation
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// A ``Quoting`` provider whose quote suspends: `park FIFO` says
/// `parked` on TMPDIR/plugboard-fixture-parked and waits, without holding
/// a thread, until FIFO's writer closes (read on a thread of its own),
/// saying `cancelled` there if its task is cancelled meanwhile; any other
/// item is quoted at once. Beside it, a synchronous command `echo` (the
/// same child answering blocking and suspended callers at once).
final class AsyncQuoter: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] {
        [.provider(Quoter(), for: Quotes.self), .provider(Echo(), for: Commands.self)]
    }

    struct Echo: Command {
        var name: String { "echo" }
        var summary: String { "Answers its arguments." }
        func run(arguments: [String]) throws -> String { arguments.joined(separator: " ") }
    }

    struct Quoter: Quoting {
        func quote(_ item: String) async throws -> String {
            let words = item.split(separator: " ").map(String.init)
            guard words.first == "park", words.count == 2 else { return "quote for \(item)" }
            announce("parked \(getpid())")
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    Thread {
                        let fd = open(words[1], O_RDONLY)
                        var byte: UInt8 = 0
                        while fd >= 0 && read(fd, &byte, 1) > 0 {}
                        if fd >= 0 { close(fd) }
                        continuation.resume()
                    }.start()
                }
            } onCancel: {
                announce("cancelled")
            }
            return "quote after waiting"
        }

        func announce(_ line: String) {
            guard let folder = ProcessInfo.processInfo.environment["TMPDIR"],
                  let fifo = fopen(folder + "/plugboard-fixture-parked", "w") else { return }
            fputs(line + "\n", fifo)
            fclose(fifo)
        }
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: AsyncQuoter.self, id: "fixture.async-quoter", version: "1.0.0", provides: [Quotes.interface, Commands.interface])
}
