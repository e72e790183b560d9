import PlugboardHost
import Dispatch
import FoundationEssentials
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// What one storage `set` costs as a plugin's folder fills, for `make bench`
/// (package access: the benchmark's, not a host's).
package enum StorageCost {
    /// Nanoseconds per `set` of a new key into a folder that already holds
    /// `keys` values (put there directly, then counted once by a first
    /// `set`), one sample per set; nil if a set failed.
    package static func setNanoseconds(keys: Int, sets: Int, root: String) -> [Double]? {
        let folder = "bench.storage"
        try? FileManager.default.removeItem(atPath: "\(root)/\(folder)")
        guard (try? FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true)) != nil else {
            return nil
        }
        var store = FileKeyValueStore(root: root, folder: folder)
        store.quota = StorageQuota(maximumKeys: keys + sets + 1)
        for index in 0..<keys {
            guard let name = try? store.name(for: "filled-\(index)"),
                FileManager.default.createFile(atPath: "\(root)/\(folder)/\(name)", contents: Data("value".utf8))
            else { return nil }
        }
        guard (try? store.set(Array("first".utf8), for: "first")) != nil else { return nil }
        var samples: [Double] = []
        for index in 0..<sets {
            let start = DispatchTime.now().uptimeNanoseconds
            guard (try? store.set(Array("value".utf8), for: "new-\(index)")) != nil else { return nil }
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start))
        }
        try? FileManager.default.removeItem(atPath: "\(root)/\(folder)")
        return samples
    }
}
