import Plugboard
import Synchronization

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
    }

    private let points = Mutex<[String: Point]>([:])

    package init() {}

    package func declare<Declared: ExtensionPoint>(_ point: Declared.Type, calls: IsolatedCallPolicy) {
        let entry = Point(crossing: PointCrossing(point), calls: calls)
        points.withLock { $0[Declared.interface.id] = entry }
    }

    /// The isolation side of the point declared as `interfaceID`, if one is.
    package func point(for interfaceID: String) -> Point? {
        points.withLock { $0[interfaceID] }
    }
}
