extension Duration {
    /// The duration in seconds as a Double, for arithmetic with dates and backoff.
    package var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    package var milliseconds: Int64 {
        let parts = components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
