import Dispatch

extension DispatchTime {
    /// The dispatch time of `deadline` (a semaphore's or a group's wait
    /// takes one); far in the future when it cannot be said in nanoseconds.
    package init(_ deadline: ContinuousClock.Instant) {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else {
            self = .now()
            return
        }
        let (seconds, attoseconds) = left.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self = nanoseconds.overflow ? .distantFuture
            : .now() + .nanoseconds(Int(clamping: nanoseconds.partialValue + attoseconds / 1_000_000_000))
    }
}

extension DispatchSemaphore {
    /// Waits for a signal until `deadline` (one already there is taken even
    /// when the deadline has passed); false when the deadline came first.
    package func wait(until deadline: ContinuousClock.Instant) -> Bool {
        wait(timeout: DispatchTime(deadline)) == .success
    }
}

extension DispatchGroup {
    /// Waits until every member left or `deadline`; false when the deadline came first.
    package func wait(until deadline: ContinuousClock.Instant) -> Bool {
        wait(timeout: DispatchTime(deadline)) == .success
    }
}
