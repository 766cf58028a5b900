import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// Long polls waiting for a stream's events (RFC 8936 §2.4): a poll that finds nothing waits here until an event for
/// its stream is queued on this node (`wake`), its time is up, its task is cancelled, or the server begins to shut
/// down (`close`: a long poll would otherwise hold a graceful shutdown for up to 30 s). At most `maximumPerStream`
/// polls wait on one stream at once.
final class PollWaiters: Sendable {
    static let maximumPerStream = 4

    private struct State {
        var waiters: [String: [UInt64: CheckedContinuation<Void, Never>]] = [:]
        /// Bumped by each wake, so that a poll that read the queue before an event came does not wait for it.
        var generations: [String: UInt64] = [:]
        var next: UInt64 = 0
        /// Shutdown has begun: no poll waits any more.
        var closed = false
    }
    private let state = Mutex(State())

    /// The stream's wake count now: read before looking at the queue, handed to `wait`.
    func generation(_ streamId: String) -> UInt64 { state.withLock { $0.generations[streamId] ?? 0 } }

    /// Wakes every poll waiting on the stream.
    func wake(_ streamId: String) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generations[streamId, default: 0] &+= 1
            return Array((state.waiters.removeValue(forKey: streamId) ?? [:]).values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Shutdown has begun: wakes every poll, and later polls answer without waiting.
    func close() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closed = true
            defer { state.waiters.removeAll() }
            return state.waiters.values.flatMap(\.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Whether `close` was called: a poll answers what it has.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Forgets a deleted stream (waking its polls).
    func forget(_ streamId: String) {
        wake(streamId)
        state.withLock { _ = $0.generations.removeValue(forKey: streamId) }
    }

    /// Waits until the stream is woken after `generation`, for at most `timeout`. `false` when too many polls wait on
    /// the stream already (the caller answers 429).
    func wait(_ streamId: String, after generation: UInt64, timeout: Duration) async -> Bool {
        var admitted = true
        let id = state.withLock { state -> UInt64 in
            state.next &+= 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if (state.generations[streamId] ?? 0) != generation || state.closed || Task.isCancelled { return true }
                    if (state.waiters[streamId]?.count ?? 0) >= Self.maximumPerStream {
                        admitted = false
                        return true
                    }
                    state.waiters[streamId, default: [:]][id] = continuation
                    return false
                }
                if now {
                    continuation.resume()
                } else {
                    MultiThreadedEventLoopGroup.singleton.any().scheduleTask(
                        in: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
                    ) {
                        self.release(streamId, id)
                    }
                }
            }
        } onCancel: {
            release(streamId, id)
        }
        return admitted
    }

    private func release(_ streamId: String, _ id: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            let found = state.waiters[streamId]?.removeValue(forKey: id)
            if state.waiters[streamId]?.isEmpty == true { state.waiters[streamId] = nil }
            return found
        }
        waiter?.resume()
    }

    /// How many polls wait now (tests).
    var waiting: Int { state.withLock { $0.waiters.values.reduce(0) { $0 + $1.count } } }
}
