import CPlugboard
import Foundation
@_spi(PlugboardHost) import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// The fair floor of an activation: what the same work costs with nothing of
/// Plugboard's host. In a fresh process, for each file: `dlopen`, the entry
/// point, the descriptor's factory, the plugin created with a trivial context
/// (no service) and activated. Run as `plugboard-bench bare-activate FILES...`;
/// prints the nanoseconds of the loop. Plugins that ask for a service in
/// `init` cannot be created here: the benchmark uses `BenchPlugin` copies.
///
/// With `--private-copy` first, each file is read whole and written to a new
/// file of a fresh folder, and the copy is loaded: the least any loader does
/// that loads the very bytes it checked (see `PrivateCopies`), without the
/// checks themselves.
enum BareHarness {
    static func run(_ arguments: [String]) -> Never {
        let copying = arguments.first == "--private-copy"
        let files = copying ? Array(arguments.dropFirst()) : arguments
        let folder = FileManager.default.temporaryDirectory.path + "/plugboard-bare-\(getpid())"
        if copying && mkdir(folder, 0o700) != 0 { fail("cannot create \(folder): \(String(cString: strerror(errno)))") }
        // Every exit goes through `fail` or the end below, which remove the
        // folder (`exit` runs no `defer`).
        func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data("bare-activate: \(message)\n".utf8))
            if copying { try? FileManager.default.removeItem(atPath: folder) }
            exit(1)
        }
        var plugins: [any Plugin] = []
        let start = Measure.now()
        for (number, original) in files.enumerated() {
            let file: String
            if copying {
                guard let copy = privateCopy(of: original, into: folder, number: number) else { fail("cannot copy \(original)") }
                file = copy
            } else {
                file = original
            }
            guard let handle = dlopen(file, RTLD_NOW | RTLD_LOCAL), let symbol = dlsym(handle, "plugboard_entry") else {
                fail("\(file): \(String(cString: dlerror()))")
            }
            let entry = unsafeBitCast(symbol, to: (@convention(c) () -> UnsafeRawPointer?).self)
            guard let raw = entry() else { fail("\(file): the entry point returned no descriptor") }
            let descriptor = raw.assumingMemoryBound(to: plugboard_descriptor.self).pointee
            guard let factoryPointer = descriptor.factory, let id = descriptor.plugin_id,
                  let factory = Unmanaged<AnyObject>.fromOpaque(factoryPointer).takeRetainedValue() as? PluginExport.Factory
            else { fail("\(file): the descriptor has no factory or id") }
            let context = PluginContext(
                pluginID: String(cString: id), pluginVersion: SemanticVersion(1, 0), declaredServices: [], granted: [:], denied: [:])
            do {
                let plugin = try factory.make(context: context)
                try plugin.activate()
                plugins.append(plugin)
            } catch {
                fail("\(file): \(error)")
            }
        }
        let elapsed = Measure.now() - start
        blackHole(plugins)
        print(elapsed)
        if copying { try? FileManager.default.removeItem(atPath: folder) }
        exit(0)
    }

    /// `file` read whole and written to a new file in `folder`; nil when
    /// either cannot be done.
    private static func privateCopy(of file: String, into folder: String, number: Int) -> String? {
        let source = open(file, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { return nil }
        defer { close(source) }
        var info = stat()
        guard fstat(source, &info) == 0 else { return nil }
        let size = Int(info.st_size)
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            initialized = max(0, pread(source, buffer.baseAddress, size, 0))
        }
        let target = "\(folder)/\(number)-\((file as NSString).lastPathComponent)"
        let fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o500)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard bytes.count == size, bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == size else { return nil }
        return target
    }
}
