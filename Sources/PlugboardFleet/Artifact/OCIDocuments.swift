import FoundationEssentials

/// The OCI documents a plugin set is published as (image-spec v1.1): an
/// index with one manifest per platform; each manifest an artifact
/// (`artifactType`, the empty config) with one layer per file of the set,
/// named by `org.opencontainers.image.title` as ORAS does.
package enum MediaType {
    package static let index = "application/vnd.oci.image.index.v1+json"
    package static let manifest = "application/vnd.oci.image.manifest.v1+json"
    package static let empty = "application/vnd.oci.empty.v1+json"
    /// A Plugboard plugin set: what `plugboard pull` accepts.
    package static let pluginSet = "application/vnd.plugboard.set.v1"
    /// One file of a set (a plugin `.so`, a `lib/` library, the lock file or its signature), stored as is.
    package static let file = "application/vnd.plugboard.file.v1"
    /// Manifests pulled are asked for in these types.
    package static let accepted = [index, manifest].joined(separator: ", ")
}

package struct Descriptor: Codable, Sendable, Equatable {
    package var mediaType: String
    package var digest: String
    package var size: Int
    package var annotations: [String: String]?
    package var platform: Platform?
    package var artifactType: String?

    package init(mediaType: String, digest: String, size: Int, annotations: [String: String]? = nil, platform: Platform? = nil, artifactType: String? = nil) {
        self.mediaType = mediaType
        self.digest = digest
        self.size = size
        self.annotations = annotations
        self.platform = platform
        self.artifactType = artifactType
    }

    /// The file name a layer stands for.
    package var title: String? { annotations?[Annotation.title] }
}

package enum Annotation {
    package static let title = "org.opencontainers.image.title"
}

package struct Platform: Codable, Sendable, Hashable, CustomStringConvertible {
    package var os: String
    package var architecture: String

    package init(os: String, architecture: String) {
        self.os = os
        self.architecture = architecture
    }

    package var description: String { "\(os)/\(architecture)" }

    /// `linux/amd64` and the like; nil when not of that form.
    package init?(_ text: String) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        self.init(os: String(parts[0]), architecture: String(parts[1]))
    }

    /// The platform this program runs on.
    package static var current: Platform {
        #if arch(x86_64)
        Platform(os: "linux", architecture: "amd64")
        #elseif arch(arm64)
        Platform(os: "linux", architecture: "arm64")
        #else
        Platform(os: "linux", architecture: "unknown")
        #endif
    }
}

package struct ImageManifest: Codable, Sendable {
    package var schemaVersion = 2
    package var mediaType = MediaType.manifest
    package var artifactType: String?
    package var config: Descriptor
    package var layers: [Descriptor]
    package var annotations: [String: String]?

    package init(artifactType: String?, config: Descriptor, layers: [Descriptor], annotations: [String: String]?) {
        self.artifactType = artifactType
        self.config = config
        self.layers = layers
        self.annotations = annotations
    }
}

package struct ImageIndex: Codable, Sendable {
    package var schemaVersion = 2
    package var mediaType = MediaType.index
    package var artifactType: String?
    package var manifests: [Descriptor]
    package var annotations: [String: String]?

    package init(artifactType: String?, manifests: [Descriptor], annotations: [String: String]? = nil) {
        self.artifactType = artifactType
        self.manifests = manifests
        self.annotations = annotations
    }
}

/// The bytes of OCI documents as Plugboard writes them: keys sorted, so one
/// set gives one digest.
package enum OCIJSON {
    package static func encode<Value: Encodable>(_ value: Value) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Only a value that cannot be encoded fails, and these all can.
        return (try? Array(encoder.encode(value))) ?? []
    }

    /// The empty config every artifact manifest carries.
    package static let emptyConfig: [UInt8] = Array("{}".utf8)
}
