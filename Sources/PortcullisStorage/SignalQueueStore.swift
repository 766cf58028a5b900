public import Foundation

/// A Shared Signals stream's SETs in the durable outbox (PROTOCOL §14.2). Every message of a stream shares its target
/// (`SharedSignalsStream.outboxTarget`), so the dispatcher hands out only the oldest pending one: push delivery is in
/// order. A message that is not to be pushed yet — a poll stream's, a paused stream's — waits with its next attempt at
/// `held` and is released (`reschedule`) when the stream resumes.
public protocol SignalQueueStore: Sendable {
    /// Queues a stream's SETs (`target` is theirs) and keeps at most `keepingAtMost` of its messages pending, dropping
    /// the oldest; returns how many were dropped.
    @discardableResult
    func enqueueSignals(_ messages: [OutboxMessage], target: String, keepingAtMost: Int) async throws -> Int
    /// The stream's pending SETs, oldest first (poll delivery, RFC 8936).
    func pendingSignals(target: String, limit: Int) async throws -> [OutboxMessage]
    /// Marks the stream's SETs named by `jti` delivered (acknowledged); returns how many were pending.
    @discardableResult
    func acknowledgeSignals(target: String, jtis: [String], at: Date) async throws -> Int
    /// Moves the stream's SETs a receiver refused (`setErrs`, jti → error) to the dead letters; returns how many.
    @discardableResult
    func rejectSignals(target: String, errors: [String: String], at: Date) async throws -> Int
    /// Sets the next attempt of every pending SET of the stream: `held` to keep them, now to release them.
    func rescheduleSignals(target: String, nextAttemptAt: Date) async throws
    /// Deletes the stream's pending SETs (a stream deleted or disabled); returns how many.
    @discardableResult
    func dropSignals(target: String) async throws -> Int
    /// The stream's newest messages in any state, newest first (status pages).
    func recentSignals(target: String, limit: Int) async throws -> [OutboxMessage]
    /// How many of the stream's messages are pending.
    func pendingSignalCount(target: String) async throws -> Int
}

extension OutboxMessage {
    /// The next attempt of a message that waits to be polled, or for its paused stream to resume.
    public static let held = Date(timeIntervalSince1970: 32_503_680_000)  // 3000-01-01
}
