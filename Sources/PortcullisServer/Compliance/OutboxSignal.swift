import NIOCore
import NIOPosix
import PortcullisStorage
import Synchronization

/// Wakes the outbox dispatcher: a message was written on this node, or a delivery finished. The dispatcher
/// sleeps on `wait(for:)` until one of these, or until its next message falls due — never polling.
public final class OutboxSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var timer: Scheduled<Void>?
    }
    private let state = Mutex(State())

    public init() {}

    /// Something changed: wake the dispatcher (or let its next wait return at once).
    public func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            state.timer?.cancel()
            state.timer = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when signalled (at once if a signal came since the last wait), after `timeout` (when not nil),
    /// or when the calling task is cancelled. One waiter at a time (the dispatcher).
    func wait(for timeout: Duration?) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    if let timeout {
                        state.timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .nanoseconds(max(0, timeout.nanoseconds))) {
                            self.fire()
                        }
                    }
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            fire()
        }
    }

    /// Resumes the waiter, if any, without leaving a signal behind.
    private func fire() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer {
                state.waiter = nil
                state.timer = nil
            }
            return state.waiter
        }
        waiter?.resume()
    }
}
