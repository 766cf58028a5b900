public import Foundation

/// The time source of everything that compares against wall-clock time. Injected, never read in domain logic.
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The system's wall clock.
public struct SystemWallClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

extension Date {
    /// This date truncated to whole seconds, as JWT NumericDates must be (libjwt reads a fraction as 0).
    public var wholeSeconds: Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }

    /// Milliseconds since 1970, rounded down: the precision of revocations and of the tokens they void (PROTOCOL §14.1).
    public var epochMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    /// The date of `milliseconds` since 1970.
    public init(epochMilliseconds milliseconds: Int64) { self.init(timeIntervalSince1970: TimeInterval(milliseconds) / 1000) }
}
