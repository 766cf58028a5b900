import Foundation
import NIOCore
import NIOPosix
import PortcullisStorage
import Synchronization

/// Wakes every long poll waiting on this node when something it may depend on changed (the tenant cache applied a
/// change: a write through this node, or another node's that the change feed brought). The waiters also re-read
/// their tenant periodically. At most `capacity` waiters: beyond that `wait` returns at once, so
/// a flood of long polls degrades to plain polls instead of growing without bound.
public final class ChangeBroadcast: Sendable {
    private struct State {
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        /// The server is shutting down: nobody waits any more.
        var closed = false
    }
    private let state = Mutex(State())
    public let capacity: Int

    public init(capacity: Int = 1000) { self.capacity = capacity }

    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Shutdown: wakes every waiter, and later waits return at once (long polls answer now, and the app polls
    /// another node, instead of holding the drain for up to a minute).
    public func close() {
        state.withLock { $0.closed = true }
        signal()
    }

    /// Wakes every waiter.
    public func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when signalled, after `timeout`, or when the task is cancelled; `false` when it could not wait
    /// (full, closed or cancelled: it returned at once).
    @discardableResult
    public func wait(for timeout: Duration) async -> Bool {
        let id = UUID()
        let admitted = Atomic<Bool>(true)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let registered = state.withLock { state -> Bool in
                    guard !Task.isCancelled, !state.closed, state.waiters.count < capacity else { return false }
                    state.waiters[id] = continuation
                    return true
                }
                guard registered else {
                    admitted.store(false, ordering: .relaxed)
                    continuation.resume()
                    return
                }
                _ = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .nanoseconds(max(0, timeout.nanoseconds))) { self.fire(id) }
            }
        } onCancel: {
            fire(id)
        }
        return admitted.load(ordering: .relaxed)
    }

    private func fire(_ id: UUID) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.resume()
    }
}
