import CPlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// A `dlopen`ed image. Never closed: a Swift image registers its metadata
/// with the runtime when it loads and there is no way to take it back, so
/// unmapping it would leave the runtime reading freed memory.
package struct DynamicLibrary: @unchecked Sendable {
    // @unchecked: the handle is an opaque token that dlsym/dladdr accept from
    // any thread (POSIX requires them to be thread-safe); we never mutate it.
    package let handle: UnsafeMutableRawPointer
    package let path: String

    package init(handle: UnsafeMutableRawPointer, path: String) {
        self.handle = handle
        self.path = path
    }

    /// Opens `path` (absolute) with `RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE`:
    /// every symbol is bound now (so a missing one fails here, not mid-call),
    /// nothing leaks into the global namespace, and a stray `dlclose` can
    /// never unmap it. Returns the `dlerror()` text on failure.
    package static func open(_ path: String) -> Result<DynamicLibrary, DynamicLibraryError> {
        precondition(path.hasPrefix("/"), "dlopen needs an absolute path, got \(path)")
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
            return .failure(DynamicLibraryError(message: lastError() ?? "unknown dlopen error"))
        }
        return .success(DynamicLibrary(handle: handle, path: path))
    }

    /// An image already in the process, without loading anything.
    package static func alreadyLoaded(_ path: String) -> DynamicLibrary? {
        dlopen(path, RTLD_NOW | RTLD_NOLOAD).map { DynamicLibrary(handle: $0, path: path) }
    }

    /// The address of `name` as this image binds it, or nil.
    package func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(handle, name)
    }

    /// The file of the image that contains `address`.
    package static func imagePath(containing address: UnsafeRawPointer) -> String? {
        plugboard_image_path(address).map { String(cString: $0) }
    }

    private static func lastError() -> String? {
        dlerror().map { String(cString: $0) }
    }
}

package struct DynamicLibraryError: Error, Sendable {
    package let message: String

    /// The symbol named by an "undefined symbol: NAME" error, if that is what it is.
    package var undefinedSymbol: String? {
        let marker = "undefined symbol: "
        guard let start = message.indices.first(where: { message[$0...].hasPrefix(marker) }) else { return nil }
        let rest = message[message.index(start, offsetBy: marker.count)...]
        let terminators: Set<Character> = [" ", "\n", "\t", ",", "("]
        return String(rest.prefix { !terminators.contains($0) })
    }
}
