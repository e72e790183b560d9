import PlugboardAdmission
import PlugboardCore
#if canImport(Glibc)
import Glibc
#endif

/// Whether a plugin (or an interface library it links) links Foundation:
/// the lean child does not, so its main thread loads Foundation before
/// such a plugin (CoreFoundation takes the thread that first loads it for
/// the main one). Read from the images' DT_NEEDED entries.
enum FoundationNeed {
    static func linked(by images: [[UInt8]]) -> Bool {
        images.contains { image in
            let needed = (try? image.withUnsafeBytes { bytes throws(ELFImage.ReadError) in try ELFImage.parse(bytes, symbols: false) })?.needed ?? []
            return needed.contains { $0.hasPrefix("libFoundation.so") || $0.hasPrefix("libFoundationNetworking.so") || $0.hasPrefix("libFoundationXML.so") }
        }
    }

    /// The same for files (an unreadable one links nothing).
    static func linked(byFiles paths: [String]) -> Bool {
        linked(by: paths.map { path in
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            defer { if fd >= 0 { close(fd) } }
            return fd >= 0 ? readToEnd(fd) ?? [] : []
        })
    }
}
