/// A ``CheckedImage`` joined with the scan of its bytes (fresh, or remembered
/// by the cache under the same content hash) and agreeing with its lock
/// entry. The only thing ``PluginLoader`` loads into the host; only
/// ``Admission/join(_:with:scannedHash:)`` makes one.
struct LoadableImage: Sendable {
    let checked: CheckedImage
    /// What the scanner process read from the descriptor.
    let scan: ScannedPlugin
    let seal: Admission.Seal

    var path: String { checked.path }
}
