import Plugboard

/// A plugin instance the host created and activated.
struct LivePlugin: Sendable {
    let id: String
    let path: String
    let generation: Int
    let instance: any Plugin
    let image: LoadedImage
    /// Its providers, as registered.
    let providers: [RegisteredProvider]
    /// The identity of the file its code was read from (for journal notes).
    var identity: FileIdentity? = nil
}
