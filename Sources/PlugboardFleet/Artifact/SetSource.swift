import FoundationEssentials
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// Where a published set is read from: a registry, or an OCI image layout
/// on disk (air-gapped sites). Both are untrusted: what they give is
/// checked against the digests it was asked by.
package protocol SetSource {
    /// A manifest or index by tag or digest.
    func manifest(_ name: String) throws(FleetError) -> RegistryClient.FetchedManifest
    /// The blob into `file` (at `path`), checked against `blob`'s size and digest.
    func fetchBlob(_ blob: Descriptor, into file: Int32, path: String) throws(FleetError)
}

extension RegistryClient: SetSource {}

/// The set a reference names, for one platform, read into a staging folder.
package struct FetchedSet {
    /// The digest the reference resolved to (the index, or a lone manifest).
    package let digest: String
    /// The chosen platform's manifest.
    package let manifestDigest: String
    package let platform: Platform?
    /// The files written into the staging folder, each with the SHA-256 (hex) it was checked against.
    package let files: [(title: String, sha256: String)]
    package let bytes: Int
    /// Bytes fetched from the source (the rest were files already installed).
    package let bytesFetched: Int
    /// Files copied from the installed set instead of fetched (same digest).
    package let reused: Int
}

package enum SetFetch {
    /// Resolves `name` (an index: the manifest for `platform`), checks it
    /// is a Plugboard set whose layers all have names a set may hold, and
    /// writes each layer into `staging`, checked against its digest.
    /// `progress` hears each file before it is fetched.
    /// A file of `installed` (the plugins directory) with a layer's digest
    /// is copied instead of fetched: an update that changes one plugin of
    /// 200 transfers that one.
    /// `admit` checks the lock file and its signature before anything else
    /// is fetched and gives the files it lists (title → SHA-256 hex).
    package static func fetch(_ name: String, from source: some SetSource, platform: Platform, into staging: String, installed: String? = nil,
                              subject: String, admit: ([UInt8], String) throws(FleetError) -> [String: String],
                              progress: (Descriptor, Int, Int) -> Void = { _, _, _ in }) throws(FleetError) -> FetchedSet {
        let top = try source.manifest(name)
        var manifest = top
        var chosen: Platform?
        if let manifests = try Self.platformManifests(top, subject: subject) {
            guard let entry = manifests.first(where: { $0.platform == platform }) else {
                let offered = manifests.compactMap { $0.platform?.description }
                throw FleetError(.platformMissing, subject, reason: "no set for \(platform) (the index offers \(offered.isEmpty ? "none" : offered.joined(separator: ", ")))",
                    fix: "publish a set built for \(platform), or pass --platform to choose another")
            }
            manifest = try source.manifest(entry.digest)
            chosen = entry.platform
        }
        let image = try Self.setManifest(manifest, subject: subject)
        let titles = try Self.titles(of: image, subject: subject)
        let layers = Dictionary(uniqueKeysWithValues: zip(titles, image.layers))
        // The lock file and its signature first, small, checked by `admit`:
        // the other layers' sizes are the registry's word, their digests
        // are signed. Only layers the signed lock lists are fetched.
        guard let lockLayer = layers[SetFiles.lockName], let signatureLayer = layers[SetFiles.signatureName] else {
            throw FleetError(.setUnsigned, subject, reason: "the set has no \(SetFiles.missing(lock: layers[SetFiles.lockName] != nil, signature: layers[SetFiles.signatureName] != nil))",
                fix: "publish a signed set (`plugboard lock --plugins DIR --sign KEYFILE`, then `plugboard publish DIR REF`); nothing was installed")
        }
        guard lockLayer.size <= 16 << 20, signatureLayer.size <= 64 << 10 else {
            throw FleetError(.manifestInvalid, subject, reason: "the lock file or its signature is declared larger than any lock file is (\(lockLayer.size), \(signatureLayer.size) bytes)",
                fix: "publish the set again with `plugboard publish`; nothing was installed")
        }
        var total = 0, fetched = 0, reused = 0
        var position = 0
        func place(_ title: String, _ layer: Descriptor) throws(FleetError) {
            position += 1
            progress(layer, position, image.layers.count)
            let path = staging + "/" + title
            // lib/ only when the set has libraries.
            if title.hasPrefix("lib/") { _ = mkdir(staging + "/lib", 0o755) }
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, title.hasSuffix(".so") ? 0o755 : 0o644)
            guard fd >= 0 else {
                throw FleetError(.installFailed, path, reason: "cannot create: \(String(cString: strerror(errno)))", fix: "free space beside the plugins directory; nothing was installed")
            }
            defer { close(fd) }
            total += layer.size
            if let installed, LocalFiles.copy(from: installed + "/" + title, to: fd, atMost: layer.size) == .copied(layer.size),
               (try? BlobCheck.verify(file: fd, path: path, against: layer)) != nil {
                reused += 1
                return
            }
            HTTPClient.rewind(fd)
            try source.fetchBlob(layer, into: fd, path: path)
            fetched += layer.size
        }
        try place(SetFiles.lockName, lockLayer)
        try place(SetFiles.signatureName, signatureLayer)
        guard let lock = FileManager.default.contents(atPath: staging + "/" + SetFiles.lockName).map(Array.init),
              let signature = try? String(contentsOfFile: staging + "/" + SetFiles.signatureName, encoding: .utf8) else {
            throw FleetError(.installFailed, staging, reason: "cannot read back the lock file fetched", fix: "check the file system beside the plugins directory")
        }
        let listed = try admit(lock, signature)
        let others = zip(titles, image.layers).filter { $0.0 != SetFiles.lockName && $0.0 != SetFiles.signatureName }
        if let mismatch = SetFiles.mismatch(others.map { ($0.0, Digest.hex($0.1.digest)) }, listed: listed) {
            throw FleetError(.setMismatch, subject, reason: "the set does not match its signed lock file: \(mismatch)", fix: "publish the set again from the signed folder; nothing was installed")
        }
        // Each file's size is the signed lock's word (lock version 3), not the
        // registry's: a layer declared otherwise is refused before a byte of
        // it is read, and no more than the signed size is ever read.
        let signedSizes = (try? LockFile.decode(Data(lock), path: SetFiles.lockName)).map(SetFiles.sizes(of:)) ?? [:]
        for (title, layer) in others {
            if let signed = signedSizes[title], layer.size != signed {
                throw FleetError(.setMismatch, subject, reason: "the registry declares \(title) as \(layer.size) bytes, its signed lock file says \(signed)",
                    fix: "publish the set again from the signed folder; nothing was installed")
            }
            if signedSizes[title] == nil, layer.size > SetFiles.unsignedSizeLimit {
                throw FleetError(.setMismatch, subject, reason: "the registry declares \(title) as \(layer.size) bytes, and its lock file (version 2) signs no sizes: more than the \(SetFiles.unsignedSizeLimit >> 20) MiB a file of such a set may have",
                    fix: "sign the set again with this version's `plugboard lock --sign` (lock version 3 records each file's size); nothing was installed")
            }
        }
        try Self.checkSpace(others.reduce(0) { $0 + $1.1.size }, in: staging)
        for (title, layer) in others { try place(title, layer) }
        let files = zip(titles, image.layers).map { ($0, Digest.hex($1.digest)) }
        return FetchedSet(digest: top.digest, manifestDigest: manifest.digest, platform: chosen, files: files, bytes: total, bytesFetched: fetched, reused: reused)
    }

    /// Refuses before fetching when `bytes` would not fit where they go.
    package static func checkSpace(_ bytes: Int, in folder: String) throws(FleetError) {
        var info = statvfs()
        guard statvfs(folder, &info) == 0 else { return }
        let free = Int(info.f_bavail) * Int(info.f_frsize)
        guard bytes <= free else {
            throw FleetError(.installFailed, folder, reason: "the set needs \(bytes) bytes, \(free) are free there", fix: "free space beside the plugins directory; nothing was installed")
        }
    }

    /// The entries of `top` when it is an image index (nil: a lone manifest),
    /// each naming a sha256 digest.
    package static func platformManifests(_ top: RegistryClient.FetchedManifest, subject: String) throws(FleetError) -> [Descriptor]? {
        struct Typed: Decodable { let mediaType: String?; let manifests: [Descriptor]? }
        guard let typed = try? JSONDecoder().decode(Typed.self, from: Data(top.bytes)) else {
            throw FleetError(.manifestInvalid, subject, reason: "the manifest \(top.digest) is not JSON an OCI document has", fix: "publish the set again with `plugboard publish`")
        }
        guard top.mediaType == MediaType.index || typed.mediaType == MediaType.index || typed.manifests != nil else { return nil }
        guard let manifests = typed.manifests, manifests.allSatisfy({ Digest.isValid($0.digest) }) else {
            throw FleetError(.manifestInvalid, subject, reason: "the index cannot be read as an OCI image index naming sha256 digests", fix: "publish the set again with `plugboard publish`")
        }
        return manifests
    }

    /// `manifest` read as a Plugboard set's manifest.
    package static func setManifest(_ manifest: RegistryClient.FetchedManifest, subject: String) throws(FleetError) -> ImageManifest {
        guard let image = try? JSONDecoder().decode(ImageManifest.self, from: Data(manifest.bytes)) else {
            throw FleetError(.manifestInvalid, subject, reason: "the manifest \(manifest.digest) cannot be read as an OCI image manifest", fix: "publish the set again with `plugboard publish`")
        }
        guard image.artifactType == MediaType.pluginSet else {
            throw FleetError(.manifestInvalid, subject, reason: "not a Plugboard plugin set (artifact type \(image.artifactType ?? "none"), expected \(MediaType.pluginSet))",
                fix: "name a set published with `plugboard publish`")
        }
        return image
    }

    /// The file names of a set's layers, each one a set may hold, once;
    /// `manifest-invalid` for any other layer (a hostile manifest naming a
    /// path outside the set, say).
    package static func titles(of image: ImageManifest, subject: String) throws(FleetError) -> [String] {
        var titles: [String] = []
        for layer in image.layers {
            // Sizes are the registry's word: bounded (1 TiB a file) so sums cannot overflow.
            guard layer.mediaType == MediaType.file, let title = layer.title, SetFiles.isAllowed(title), !titles.contains(title),
                  Digest.isValid(layer.digest), layer.size >= 0, layer.size <= 1 << 40 else {
                throw FleetError(.manifestInvalid, subject, reason: "layer \(layer.title ?? layer.digest) is not a file a set may hold (NAME.so, lib/NAME, the lock file and its signature, each once)",
                    fix: "publish the set again with `plugboard publish`; nothing was installed")
            }
            titles.append(title)
        }
        return titles
    }
}
