import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import DemoInterfaces
import Plugboard
import PlugboardHost

/// A screen built from plugin sections.
public struct ComposedScreen: Sendable, Encodable {
    public struct Section: Sendable, Encodable {
        /// The section's `type` in the document.
        public let type: String
        /// The plugin that rendered it.
        public let plugin: String
        public let rendered: RenderedSection
    }

    public let title: String?
    /// Rendered sections, in document order; dropped ones are missing.
    public let sections: [Section]
    /// One per dropped section (unknown type, payload its plugin rejected).
    public let diagnostics: [HostDiagnostic]
}

extension PluginHost {
    /// Composes a screen document: `{"title": ..., "sections": [{"type": "...", ...}, ...]}`.
    ///
    /// Each section goes, as its own raw JSON, to the ``SectionRenderer`` that
    /// registered its `type`; that plugin decodes it with its own types. A
    /// section whose type nobody handles (e.g. its plugin is disabled) or whose
    /// plugin cannot decode or render it is dropped with a diagnostic naming
    /// `source` and the section's index; the rest of the screen renders.
    public func compose(screen document: Data, source: String) -> ComposedScreen {
        var problems: [HostDiagnostic] = []
        func drop(_ code: HostDiagnostic.Code, _ message: String, _ keyPath: String?, plugin: String? = nil) {
            problems.append(HostDiagnostic(.error, code: code, message: message, file: source, keyPath: keyPath, plugin: plugin))
        }
        // Each section goes on as its own JSON, which the plugin that renders
        // it decodes with its own types.
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(document)
        } catch {
            drop("screen-malformed", "not valid JSON: \(error.message); nothing to render", nil)
            return ComposedScreen(title: nil, sections: [], diagnostics: problems)
        }
        guard case let .object(root) = parsed, case let .array(items)? = root["sections"] else {
            drop("screen-malformed", "a screen is an object with a \"sections\" array", nil)
            return ComposedScreen(title: nil, sections: [], diagnostics: problems)
        }
        let title: String? = if case let .string(text)? = root["title"] { text } else { nil }

        var renderers: [String: (plugin: String, renderer: any SectionRenderer)] = [:]
        for registration in registry.registrations(for: ScreenSections.interface.id) {
            guard let renderer = registration.provider as? any SectionRenderer else { continue }
            for type in renderer.sectionTypes {
                if let owner = renderers[type] {
                    // The first provider in registry order (by plugin id) keeps it.
                    if owner.plugin != registration.pluginID {
                        problems.append(HostDiagnostic(.warning, code: "section-type-conflict",
                            message: "plugins \(owner.plugin) and \(registration.pluginID) both render '\(type)'; \(owner.plugin) (first by id) renders it",
                            plugin: registration.pluginID))
                    }
                    continue
                }
                renderers[type] = (registration.pluginID, renderer)
            }
        }

        var sections: [ComposedScreen.Section] = []
        for (index, item) in items.enumerated() {
            let keyPath = "sections[\(index)]"
            guard case let .object(fields) = item, case let .string(type)? = fields["type"] else {
                drop("section-malformed", "a section is an object with a string \"type\"", keyPath)
                continue
            }
            guard let (plugin, renderer) = renderers[type] else {
                drop("section-unknown-type", "no active plugin renders sections of type '\(type)'; section omitted", keyPath)
                continue
            }
            do {
                let json = [UInt8](try JSONEncoder().encode(item))
                let rendered = try renderer.render(type: type, json: json)
                sections.append(.init(type: type, plugin: plugin, rendered: rendered))
            } catch {
                drop("section-decode-failed", "plugin \(plugin) could not render its '\(type)' section: \(describe(error)); section omitted", keyPath, plugin: plugin)
            }
        }
        return ComposedScreen(title: title, sections: sections, diagnostics: problems)
    }

    /// Decoding errors say which field, in words: `items[0].price is not a number`.
    private func describe(_ error: any Error) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.reduce("") { path, key in
                if let index = key.intValue { return "\(path)[\(index)]" }
                return path.isEmpty ? key.stringValue : "\(path).\(key.stringValue)"
            }
        }
        switch error {
        case let DecodingError.keyNotFound(key, context):
            return "missing field '\(path(context.codingPath + [key]))'"
        case let DecodingError.typeMismatch(type, context):
            let expected = type == Double.self || type == Int.self ? "a number" : type == String.self ? "a string" : "\(type)"
            return "field '\(path(context.codingPath))' is not \(expected)"
        case let DecodingError.valueNotFound(type, context):
            return "field '\(path(context.codingPath))' has no \(type) value"
        case let DecodingError.dataCorrupted(context):
            return "field '\(path(context.codingPath))': \(context.debugDescription)"
        default:
            return String(describing: error)
        }
    }
}
