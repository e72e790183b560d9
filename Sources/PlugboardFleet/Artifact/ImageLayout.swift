import FoundationEssentials
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// An OCI image layout on disk (`oci-layout`, `index.json`,
/// `blobs/sha256/HEX`), as `oras copy --to-oci-layout` and skopeo write
/// it: how a set travels to an air-gapped site. Read as untrusted as a
/// registry: every blob is checked against its digest.
package struct ImageLayout: SetSource {
    package let path: String
    /// The annotation naming a reference in `index.json`.
    package static let refName = "org.opencontainers.image.ref.name"

    package init(path: String) { self.path = path }

    private func blobPath(_ digest: String) -> String { "\(path)/blobs/sha256/\(Digest.hex(digest))" }

    private func invalid(_ reason: String) -> FleetError {
        FleetError(.layoutInvalid, path, reason: reason, fix: "export the set again (`plugboard export REF \(path)`)")
    }

    /// The descriptors `index.json` lists.
    package func entries() throws(FleetError) -> [Descriptor] {
        guard let data = LocalFiles.read(path + "/index.json", limit: RegistryClient.manifestLimit) else {
            throw invalid("no index.json (a regular file of at most 4 MiB): not an OCI image layout")
        }
        guard let index = try? JSONDecoder().decode(ImageIndex.self, from: Data(data)) else { throw invalid("index.json cannot be read as an OCI image index") }
        return index.manifests
    }

    /// By digest, or by the name `index.json` gives it (the only one when `name` is nil).
    package func manifest(_ name: String) throws(FleetError) -> RegistryClient.FetchedManifest {
        var digest = name
        var mediaType: String?
        if !Digest.isValid(name) {
            let entries = try entries()
            guard let entry = entries.first(where: { $0.annotations?[Self.refName] == name }) ?? (entries.count == 1 && name.isEmpty ? entries.first : nil) else {
                throw FleetError(.referenceNotFound, path, reason: "no set named '\(name)' in the layout (it has \(entries.compactMap { $0.annotations?[Self.refName] }.joined(separator: ", ")))", fix: "pass one of those names with --name")
            }
            digest = entry.digest
            mediaType = entry.mediaType
        }
        guard Digest.isValid(digest), let bytes = LocalFiles.read(blobPath(digest), limit: RegistryClient.manifestLimit) else {
            throw invalid("the manifest \(digest) is not in blobs/sha256 (as a regular file of at most 4 MiB)")
        }
        guard Digest.of(bytes) == digest else {
            throw FleetError(.manifestInvalid, path, reason: "the manifest stored as \(digest) has other bytes (\(Digest.of(bytes)))", fix: "export the set again; nothing was installed")
        }
        struct Typed: Decodable { let mediaType: String? }
        let declared = (try? JSONDecoder().decode(Typed.self, from: Data(bytes)))?.mediaType
        return RegistryClient.FetchedManifest(bytes: bytes, mediaType: mediaType ?? declared ?? MediaType.manifest, digest: digest)
    }

    package func fetchBlob(_ blob: Descriptor, into file: Int32, path target: String) throws(FleetError) {
        switch LocalFiles.copy(from: blobPath(blob.digest), to: file, atMost: blob.size) {
        case .unreadable:
            throw invalid("the blob \(blob.digest) (\(blob.title ?? "unnamed")) is not in blobs/sha256 as a regular file")
        case let .unwritable(code):
            throw FleetError(.installFailed, target, reason: "cannot write: \(String(cString: strerror(code)))", fix: "free space beside the plugins directory; nothing was installed")
        case .copied, .tooLong:
            // No more than the descriptor says is ever copied; the check says what is wrong.
            break
        }
        try BlobCheck.verify(file: file, path: target, against: blob)
    }

    /// Writes a layout holding the set `name` names in `source`, every
    /// platform, each blob checked as it is copied; `name` is recorded as
    /// the reference's tag. Returns the digest and the files written.
    package static func export(_ name: String, tag: String?, from source: RegistryClient, to path: String,
                               progress: (String) -> Void = { _ in }) throws(FleetError) -> (digest: String, blobs: Int, bytes: Int) {
        let blobs = path + "/blobs/sha256"
        do { try FileManager.default.createDirectory(atPath: blobs, withIntermediateDirectories: true) } catch {
            throw FleetError(.installFailed, path, reason: "cannot create the layout: \(error)", fix: "pass a folder this user can write")
        }
        var count = 0, bytes = 0
        func store(_ data: [UInt8], _ digest: String) throws(FleetError) {
            if let problem = replaceFile("\(blobs)/\(Digest.hex(digest))", with: data, temporary: "\(blobs)/.\(Digest.hex(digest)).partial", mode: 0o644) {
                throw FleetError(.installFailed, path, reason: problem, fix: "free space where the layout is written")
            }
            count += 1
            bytes += data.count
        }
        let top = try source.manifest(name)
        try store(top.bytes, top.digest)
        var manifests: [RegistryClient.FetchedManifest] = [top]
        if let entries = try SetFetch.platformManifests(top, subject: source.reference.description) {
            manifests = []
            for entry in entries {
                let manifest = try source.manifest(entry.digest)
                try store(manifest.bytes, manifest.digest)
                manifests.append(manifest)
            }
        }
        for manifest in manifests {
            let image = try SetFetch.setManifest(manifest, subject: source.reference.description)
            // The same bounds as a pull: a set's names, sizes that fit.
            _ = try SetFetch.titles(of: image, subject: source.reference.description)
            try SetFetch.checkSpace(image.layers.reduce(0) { $0 + $1.size }, in: blobs)
            for blob in [image.config] + image.layers where Digest.isValid(blob.digest) {
                let target = "\(blobs)/\(Digest.hex(blob.digest))"
                if access(target, F_OK) == 0 { continue }
                progress("exporting \(blob.title ?? blob.digest) (\(blob.size) bytes)")
                let partial = "\(blobs)/.\(Digest.hex(blob.digest)).partial"
                let fd = open(partial, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw FleetError(.installFailed, partial, reason: String(cString: strerror(errno)), fix: "free space where the layout is written") }
                do {
                    try source.fetchBlob(blob, into: fd, path: partial)
                    fsync(fd)
                    close(fd)
                } catch {
                    close(fd)
                    unlink(partial)
                    throw error
                }
                rename(partial, target)
                count += 1
                bytes += blob.size
            }
        }
        var annotations: [String: String]? = nil
        if let tag { annotations = [refName: tag] }
        let index = ImageIndex(artifactType: nil, manifests: [Descriptor(mediaType: top.mediaType, digest: top.digest, size: top.bytes.count, annotations: annotations)])
        let layoutVersion = Array(#"{"imageLayoutVersion":"1.0.0"}"#.utf8)
        if let problem = replaceFile(path + "/oci-layout", with: layoutVersion, temporary: path + "/.oci-layout.partial", mode: 0o644)
            ?? replaceFile(path + "/index.json", with: OCIJSON.encode(index), temporary: path + "/.index.json.partial", mode: 0o644) {
            throw FleetError(.installFailed, path, reason: problem, fix: "free space where the layout is written")
        }
        return (top.digest, count, bytes)
    }
}
