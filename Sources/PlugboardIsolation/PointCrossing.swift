@_spi(PlugboardHost) import Plugboard

/// An ``IsolatableExtensionPoint`` with its types erased: how the host
/// makes a proxy for one of its providers, and how the child serves it.
package struct PointCrossing: Sendable {
    let interfaceID: String
    /// The point type's mangled name: the child finds the same type by it.
    package let typeName: String
    /// Host: the proxy for a provider whose profile the child sent.
    let makeProxy: @Sendable (any IsolatedProvider, ArraySlice<UInt8>) throws -> any Sendable
    /// Child: whether a contribution has the point's provider type.
    let accepts: @Sendable (any Sendable) -> Bool
    /// Child: the provider's profile, encoded.
    let profile: @Sendable (any Sendable) throws -> [UInt8]
    /// Child: runs one call on the provider.
    let serve: @Sendable (any IsolatedCall, any Sendable) async throws -> Void

    /// The crossing of `point`, or nil when it cannot cross a process.
    init?(_ point: any ExtensionPoint.Type) {
        guard let isolatable = point as? any IsolatableExtensionPoint.Type else { return nil }
        self = Self.make(isolatable)
    }

    /// The crossing of the point type named `typeName` in this program, if it is one.
    init?(typeName: String) {
        guard let type = _typeByName(typeName) as? any ExtensionPoint.Type else { return nil }
        self.init(type)
    }

    private init(
        interfaceID: String, typeName: String,
        makeProxy: @escaping @Sendable (any IsolatedProvider, ArraySlice<UInt8>) throws -> any Sendable,
        accepts: @escaping @Sendable (any Sendable) -> Bool, profile: @escaping @Sendable (any Sendable) throws -> [UInt8],
        serve: @escaping @Sendable (any IsolatedCall, any Sendable) async throws -> Void
    ) {
        self.interfaceID = interfaceID
        self.typeName = typeName
        self.makeProxy = makeProxy
        self.accepts = accepts
        self.profile = profile
        self.serve = serve
    }

    private static func make<Point: IsolatableExtensionPoint>(_ point: Point.Type) -> PointCrossing {
        PointCrossing(
            interfaceID: Point.interface.id, typeName: _mangledTypeName(point) ?? "",
            makeProxy: { isolated, profile in
                Point.proxy(isolated, profile: try CompactDecoder().decode(Point.Profile.self, from: profile))
            },
            accepts: { $0 is Point.Provider },
            profile: { provider in
                // Checked by `accepts` before.
                try CompactEncoder().encode(Point.profile(of: provider as! Point.Provider))
            },
            serve: { call, provider in
                try await Point.serve(call, on: provider as! Point.Provider)
            })
    }
}
