public import Logging
public import ServiceLifecycle
import Synchronization

/// The first step of a graceful shutdown: readiness answers 503 (`draining`) while the server keeps
/// accepting and answering for `delay`, so that a load balancer stops sending new connections before the
/// listener closes (closing a listener resets the connections still waiting in its backlog). Then this
/// service returns and the service group shuts the HTTP server down (no new connections; requests in
/// flight answered). Put it after the application in the service group: services stop in reverse order.
public final class Drain: Service, Sendable {
    private let draining = Atomic<Bool>(false)
    public let delay: Duration
    private let logger: Logger
    /// What else stops at once when shutdown begins (long polls answer).
    private let onStart: @Sendable () -> Void

    public init(delay: Duration, logger: Logger, onStart: @escaping @Sendable () -> Void = {}) {
        self.delay = delay
        self.logger = logger
        self.onStart = onStart
    }

    /// Whether shutdown has begun (readiness reports it).
    public var isDraining: Bool { draining.load(ordering: .relaxed) }

    public func run() async throws {
        try? await gracefulShutdown()
        draining.store(true, ordering: .relaxed)
        onStart()
        logger.notice("shutting down: readiness answers 503 while connections drain", metadata: ["portcullis.drain": .string("\(delay)")])
        // Not cancellable by the shutdown itself: this wait is the point. The service group's own limits cancel it.
        try? await Task.sleep(for: delay)
    }
}
