import DemoInterfaces
import FixtureSupport
import Plugboard

/// Publishes an extension point of its own (DemoInterfaces' ScreenSections
/// stands for one in `lib/`, which the test host does not declare) and reads
/// its providers: its command `sections` lists the section types they render.
final class ExtPublisher: Plugin {
    let extensions: any ExtensionLookup

    init(context: PluginContext) throws {
        extensions = try context.service(Services.Extensions.self)
    }

    func contributions() -> [Contribution] { [.provider(Sections(publisher: self), for: Commands.self)] }

    struct Sections: Command {
        let publisher: ExtPublisher
        var name: String { "sections" }
        var summary: String { "the section types its providers render" }
        func run(arguments: [String]) throws -> String {
            let types = publisher.extensions.providers(of: ScreenSections.self).flatMap(\.sectionTypes)
            return types.isEmpty ? "none" : types.sorted().joined(separator: ", ")
        }
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: ExtPublisher.self, id: "fixture.ext.publisher", version: "1.0.0", provides: [Commands.interface],
        services: [Services.Extensions.id])
}
