import CPlugboardHost
import Plugboard
import Synchronization
import PlugboardCore

/// The isolation side of the host's declared extension points: how each
/// one's providers cross a process, and how the host calls isolated
/// providers of it. Kept beside the registry, which knows nothing of
/// isolation; the lifecycle declares a point in both.
package final class IsolatedPoints: Sendable {
    package struct Point: Sendable {
        /// How its providers cross a process (nil: they cannot; plugins that
        /// provide it are refused for isolation).
        package let crossing: PointCrossing?
        /// How the host calls its isolated providers.
        package let calls: IsolatedCallPolicy
        /// The shared library that defines the point's type (a host's
        /// interface package), which the child loads before the plugin; nil
        /// when the SDK or the host's executable defines it.
        package let library: String?
    }

    private let points = Mutex<[String: Point]>([:])

    package init() {}

    package func declare<Declared: ExtensionPoint>(_ point: Declared.Type, calls: IsolatedCallPolicy) {
        let entry = Point(crossing: PointCrossing(point), calls: calls, library: Self.library(defining: point))
        points.withLock { $0[Declared.interface.id] = entry }
    }

    /// The image that defines `type`'s metadata, when it is a shared library
    /// other than the SDK's (`plugboard-child` has the SDK; a type of the
    /// host's executable cannot be loaded elsewhere).
    private static func library(defining type: Any.Type) -> String? {
        guard let found = plugboard_image_path(unsafeBitCast(type, to: UnsafeRawPointer.self)) else { return nil }
        let path = String(cString: found)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard name.hasSuffix(".so") || name.contains(".so."), name != PluginDirectory.sdkSoname else { return nil }
        return path
    }

    /// The isolation side of the point declared as `interfaceID`, if one is.
    package func point(for interfaceID: String) -> Point? {
        points.withLock { $0[interfaceID] }
    }
}
