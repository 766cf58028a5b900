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
}
