extension Duration {
    /// The duration in milliseconds, as every phase timing is reported.
    package var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}

extension ContinuousClock.Instant {
    /// Milliseconds from this instant until now.
    package var millisecondsElapsed: Double { (ContinuousClock.now - self).milliseconds }
}
