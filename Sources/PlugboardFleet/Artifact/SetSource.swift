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
    package static func fetch(_ name: String, from source: some SetSource, platform: Platform, into staging: String, installed: String? = nil,
                              subject: String, progress: (Descriptor, Int, Int) -> Void = { _, _, _ in }) throws(FleetError) -> FetchedSet {
        let top = try source.manifest(name)
        var manifest = top
        var chosen: Platform?
        if top.mediaType == MediaType.index || (try? JSONDecoder().decode(ImageIndex.self, from: Data(top.bytes)))?.manifests.isEmpty == false {
            guard let index = try? JSONDecoder().decode(ImageIndex.self, from: Data(top.bytes)) else {
                throw FleetError(.manifestInvalid, subject, reason: "the index cannot be read as an OCI image index", fix: "publish the set again with `plugboard publish`")
            }
            guard let entry = index.manifests.first(where: { $0.platform == platform }) else {
                let offered = index.manifests.compactMap { $0.platform?.description }
                throw FleetError(.platformMissing, subject, reason: "no set for \(platform) (the index offers \(offered.isEmpty ? "none" : offered.joined(separator: ", ")))",
                    fix: "publish a set built for \(platform), or pass --platform to choose another")
            }
            guard Digest.isValid(entry.digest) else {
                throw FleetError(.manifestInvalid, subject, reason: "the index names '\(entry.digest)', not a sha256 digest", fix: "publish the set again")
            }
            manifest = try source.manifest(entry.digest)
            chosen = entry.platform
        }
        let image = try Self.setManifest(manifest, subject: subject)
        let titles = try Self.titles(of: image, subject: subject)
        var total = 0, fetched = 0, reused = 0
        for (position, layer) in image.layers.enumerated() {
            progress(layer, position + 1, image.layers.count)
            let path = staging + "/" + titles[position]
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, titles[position].hasSuffix(".so") ? 0o755 : 0o644)
            guard fd >= 0 else {
                throw FleetError(.installFailed, path, reason: "cannot create: \(String(cString: strerror(errno)))", fix: "free space beside the plugins directory; nothing was installed")
            }
            defer { close(fd) }
            total += layer.size
            if let installed, copy(installed + "/" + titles[position], size: layer.size, into: fd),
               (try? BlobCheck.verify(file: fd, path: path, against: layer)) != nil {
                reused += 1
                continue
            }
            _ = ftruncate(fd, 0)
            _ = lseek(fd, 0, SEEK_SET)
            try source.fetchBlob(layer, into: fd, path: path)
            fetched += layer.size
        }
        let files = zip(titles, image.layers).map { ($0, Digest.hex($1.digest)) }
        return FetchedSet(digest: top.digest, manifestDigest: manifest.digest, platform: chosen, files: files, bytes: total, bytesFetched: fetched, reused: reused)
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
            guard layer.mediaType == MediaType.file, let title = layer.title, SetFiles.isAllowed(title), !titles.contains(title),
                  Digest.isValid(layer.digest), layer.size >= 0 else {
                throw FleetError(.manifestInvalid, subject, reason: "layer \(layer.title ?? layer.digest) is not a file a set may hold (NAME.so, lib/NAME, the lock file and its signature, each once)",
                    fix: "publish the set again with `plugboard publish`; nothing was installed")
            }
            titles.append(title)
        }
        return titles
    }

    /// Copies `path` into `file` when it is a regular file of `size` bytes.
    private static func copy(_ path: String, size: Int, into file: Int32) -> Bool {
        let source = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard source >= 0 else { return false }
        defer { close(source) }
        var info = stat()
        guard fstat(source, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) == size else { return false }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return false }
            if count == 0 { return true }
            guard buffer.withUnsafeBytes({ writeAll(file, UnsafeRawBufferPointer(rebasing: $0[..<count])) }) else { return false }
        }
    }
}
