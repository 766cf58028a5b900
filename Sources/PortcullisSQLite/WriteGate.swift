import Synchronization

/// Serialises use of the single writer connection, so that a transaction's statements are never interleaved
/// with another task's. FIFO; the gate passes directly to the next waiter on release.
final class WriteGate: Sendable {
    private struct State {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func acquire() async {
        let acquired = state.withLock { state -> Bool in
            if state.busy { return false }
            state.busy = true
            return true
        }
        if acquired { return }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if !state.busy {
                    state.busy = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst()  // stays busy: ownership passes to the waiter
        }
        next?.resume()
    }

    /// Whether someone is waiting for the gate (read by its holder).
    var hasWaiters: Bool { state.withLock { !$0.waiters.isEmpty } }
}
