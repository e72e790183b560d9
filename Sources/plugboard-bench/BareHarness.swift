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
enum BareHarness {
    static func run(_ files: [String]) -> Never {
        var plugins: [any Plugin] = []
        let start = Measure.now()
        for file in files {
            guard let handle = dlopen(file, RTLD_NOW | RTLD_LOCAL), let symbol = dlsym(handle, "plugboard_entry") else {
                FileHandle.standardError.write(Data("bare-activate: \(file): \(String(cString: dlerror()))\n".utf8))
                exit(1)
            }
            let entry = unsafeBitCast(symbol, to: (@convention(c) () -> UnsafeRawPointer?).self)
            guard let raw = entry() else { exit(1) }
            let descriptor = raw.assumingMemoryBound(to: plugboard_descriptor.self).pointee
            guard let factoryPointer = descriptor.factory, let id = descriptor.plugin_id,
                  let factory = Unmanaged<AnyObject>.fromOpaque(factoryPointer).takeRetainedValue() as? PluginExport.Factory
            else { exit(1) }
            let context = PluginContext(
                pluginID: String(cString: id), pluginVersion: SemanticVersion(1, 0), declaredServices: [], granted: [:], denied: [:])
            do {
                let plugin = try factory.make(context: context)
                try plugin.activate()
                plugins.append(plugin)
            } catch {
                FileHandle.standardError.write(Data("bare-activate: \(file): \(error)\n".utf8))
                exit(1)
            }
        }
        let elapsed = Measure.now() - start
        blackHole(plugins)
        print(elapsed)
        exit(0)
    }
}
