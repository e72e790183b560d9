import FoundationEssentials

/// The fleet's parsers of what a registry or a layout sends, as functions
/// of bytes for the fuzzer (`make fuzz`) and the corpus replay in `make
/// test`: the authentication challenge, manifests and indexes with the
/// layer names a set may hold, redirect locations. A target returns for
/// input it rejects and traps only when an invariant breaks.
package enum FleetFuzzing {
    package static let targets: [(name: String, run: @Sendable (UnsafeRawBufferPointer) -> Void)] = [("registry", registry)]

    static func registry(_ bytes: UnsafeRawBufferPointer) {
        let data = Data(bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        _ = RegistryClient.challengeParameters(text)
        let resolved = HTTPClient.resolve(text, against: "http://127.0.0.1:5000/v2/r/blobs/sha256:0")
        _ = HTTPClient.origin(of: resolved)
        if let image = try? JSONDecoder().decode(ImageManifest.self, from: data),
           let titles = try? SetFetch.titles(of: image, subject: "fuzz") {
            for title in titles {
                precondition(!title.hasPrefix("/") && !title.split(separator: "/").contains("..") && !title.hasPrefix("."), "a layer name outside the set was accepted: \(title)")
                precondition(title.split(separator: "/").count <= 2, "a nested layer name was accepted")
            }
        }
        if let index = try? JSONDecoder().decode(ImageIndex.self, from: data) {
            _ = index.manifests.first { $0.platform == .current && Digest.isValid($0.digest) }
        }
        if case let .success(reference) = Reference.parse(text) {
            precondition(!reference.repository.isEmpty && !reference.host.isEmpty)
        }
    }
}
