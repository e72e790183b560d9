#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Plugboard

/// A block of text a plugin renders: one section of a screen, or a router destination.
public struct RenderedSection: Sendable, Hashable, Codable {
    public var title: String
    public var lines: [String]

    public init(title: String, lines: [String]) {
        self.title = title
        self.lines = lines
    }
}

/// Renders the sections of a composed screen whose type it registered.
///
/// The host gives each renderer only the raw JSON of its own section, so one
/// plugin's bad data breaks only its own section: if ``render(type:json:)``
/// throws, the host drops that section with a diagnostic and renders the rest.
public protocol SectionRenderer: Sendable {
    /// Section types this renderer handles, e.g. `["coupon"]`.
    var sectionTypes: [String] { get }
    /// Renders one section from its JSON object.
    func render(type: String, json: [UInt8]) throws -> RenderedSection
}

extension SectionRenderer {
    /// Decodes the section's JSON into your own type.
    public func decode<Payload: Decodable>(_ type: Payload.Type, from json: [UInt8]) throws -> Payload {
        try JSONDecoder().decode(type, from: Data(json))
    }
}

/// The extension point for ``SectionRenderer`` providers: `dev.plugboard.demo.screen-section` 1.0.
///
/// A host's own point takes an id in the host's reverse-DNS namespace;
/// `plugboard.*` ids belong to the SDK.
public enum ScreenSections: ExtensionPoint {
    public typealias Provider = any SectionRenderer
    @_alwaysEmitIntoClient
    public static var interface: Interface { Interface(id: "dev.plugboard.demo.screen-section", version: SemanticVersion(1, 0)) }
}
