import FoundationEssentials
import PlugboardHost

/// Pushes plugin sets (one per platform) as one OCI artifact: each file a
/// layer, blobs the registry already has not sent again, a manifest per
/// platform, and an index over them under the tag.
package enum SetPublisher {
    /// One platform's set to publish.
    package struct Input {
        package let directory: String
        package let platform: Platform
        package let files: [(title: String, bytes: [UInt8])]

        package init(directory: String, platform: Platform, files: [(title: String, bytes: [UInt8])]) {
            self.directory = directory
            self.platform = platform
            self.files = files
        }
    }

    package struct Report: Encodable {
        package let ok = true
        package let reference: String
        package let digest: String
        package let platforms: [String]
        package let files: Int
        package let blobsSent: Int
        package let blobsSkipped: Int
        package let bytesSent: Int
    }

    /// Reads and checks the set in `directory`: signed unless `allowUnsigned`,
    /// every file listed in the lock file with its hash; its platform from
    /// its `.so` files unless given.
    package static func input(_ directory: String, platform given: Platform?, allowUnsigned: Bool) throws(FleetError) -> Input {
        let files = try SetFiles.read(directory)
        let titles = Set(files.map(\.title))
        if !titles.contains(SetFiles.lockName) || !titles.contains(SetFiles.signatureName) {
            if !allowUnsigned {
                throw FleetError(.setUnsigned, directory, reason: "the set has no \(SetFiles.missing(lock: titles.contains(SetFiles.lockName), signature: titles.contains(SetFiles.signatureName)))",
                    fix: "sign it first (`plugboard lock --plugins \(directory) --sign KEYFILE`), or pass --allow-unsigned for a private registry whose hosts do not require signatures")
            }
        }
        if let lockBytes = files.first(where: { $0.title == SetFiles.lockName })?.bytes {
            let lock: LockFile
            do { lock = try LockFile.decode(Data(lockBytes), path: directory + "/" + SetFiles.lockName) } catch {
                throw FleetError(.setMismatch, directory + "/" + SetFiles.lockName, reason: error.reason, fix: "write it again (`plugboard lock --plugins \(directory) --sign KEYFILE`)")
            }
            if let mismatch = SetFiles.mismatch(files.map { ($0.title, SHA256.hex($0.bytes)) }, listed: SetFiles.listing(of: lock)) {
                throw FleetError(.setMismatch, directory, reason: "the files are not the set its lock file lists: \(mismatch)", fix: "lock and sign it again (`plugboard lock --plugins \(directory) --sign KEYFILE`)")
            }
        }
        let plugins = files.filter { $0.title.hasSuffix(".so") && !$0.title.hasPrefix("lib/") }
        guard !plugins.isEmpty else {
            throw FleetError(.init("set-unreadable"), directory, reason: "holds no plugin (.so) file", fix: "pass the plugins directory of the set")
        }
        let platforms = Set(plugins.compactMap { SetFiles.platform(of: $0.bytes) })
        let platform: Platform
        if let given {
            platform = given
        } else {
            guard platforms.count == 1, let only = platforms.first else {
                throw FleetError(.init("platform-unknown"), directory, reason: platforms.isEmpty ? "no plugin is an ELF library for a known platform" : "its plugins are built for several platforms (\(platforms.map { $0.description }.sorted().joined(separator: ", ")))",
                    fix: "one set per platform; pass --platform OS/ARCH to say which this is")
            }
            platform = only
        }
        return Input(directory: directory, platform: platform, files: files)
    }

    /// Pushes `sets` under `reference`'s tag.
    package static func publish(_ sets: [Input], to client: RegistryClient, progress: (String) -> Void = { _ in }) throws(FleetError) -> Report {
        var sent = 0, skipped = 0, bytesSent = 0, fileCount = 0
        var manifests: [Descriptor] = []
        let emptyDigest = Digest.of(OCIJSON.emptyConfig)
        if try client.pushBlob(OCIJSON.emptyConfig, digest: emptyDigest) { sent += 1 } else { skipped += 1 }
        for set in sets {
            var layers: [Descriptor] = []
            for file in set.files {
                let digest = Digest.of(file.bytes)
                progress("\(set.platform) \(file.title) (\(file.bytes.count) bytes)")
                if try client.pushBlob(file.bytes, digest: digest) {
                    sent += 1
                    bytesSent += file.bytes.count
                } else {
                    skipped += 1
                }
                layers.append(Descriptor(mediaType: MediaType.file, digest: digest, size: file.bytes.count, annotations: [Annotation.title: file.title]))
            }
            fileCount += set.files.count
            let manifest = ImageManifest(artifactType: MediaType.pluginSet, config: Descriptor(mediaType: MediaType.empty, digest: emptyDigest, size: OCIJSON.emptyConfig.count),
                                         layers: layers, annotations: nil)
            let bytes = OCIJSON.encode(manifest)
            let digest = Digest.of(bytes)
            try client.putManifest(bytes, mediaType: MediaType.manifest, as: digest)
            manifests.append(Descriptor(mediaType: MediaType.manifest, digest: digest, size: bytes.count, platform: set.platform, artifactType: MediaType.pluginSet))
        }
        let index = OCIJSON.encode(ImageIndex(artifactType: MediaType.pluginSet, manifests: manifests))
        let digest = Digest.of(index)
        try client.putManifest(index, mediaType: MediaType.index, as: digest)
        let reference = client.reference
        if let tag = reference.tag, reference.digest == nil { try client.putManifest(index, mediaType: MediaType.index, as: tag) }
        return Report(reference: reference.description, digest: digest, platforms: sets.map(\.platform.description),
                      files: fileCount, blobsSent: sent, blobsSkipped: skipped, bytesSent: bytesSent)
    }
}
