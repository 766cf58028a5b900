import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Launching and reaping child processes in tests without trusting Foundation's exit monitoring.
///
/// swift-corelibs-foundation's `Process` missed the exit of one of two servers launched at the same time
/// (seen twice in full-suite runs): the child stayed a zombie, `isRunning` stayed true, `terminationStatus`
/// trapped and `waitUntilExit` never returned. So launches are serialised, and exits are read with our own
/// `waitpid`.
enum ChildProcess {
    private static let launchLock = NSLock()

    static func launch(_ process: Process) throws {
        launchLock.lock()
        defer { launchLock.unlock() }
        try process.run()
    }

    enum State: Equatable {
        case running
        /// Exit status, or 128 + the signal that ended it.
        case exited(Int32)
        /// Foundation reaped it first; its `terminationStatus` is then the source.
        case reapedByFoundation
    }

    static func poll(_ pid: pid_t) -> State {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid {
            let signal = status & 0x7f
            return .exited(signal == 0 ? (status >> 8) & 0xff : 128 + signal)
        }
        if result == -1 && errno == ECHILD { return .reapedByFoundation }
        return .running
    }

    /// The exit status of `process`, polling up to `timeout`; nil if it is still running then.
    static func exitStatus(of process: Process, timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            switch poll(process.processIdentifier) {
            case .exited(let status): return status
            case .reapedByFoundation:
                while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
                return process.isRunning ? nil : process.terminationStatus
            case .running: try? await Task.sleep(for: .milliseconds(20))
            }
        }
        return nil
    }

    /// The synchronous form, for short-lived helper programs.
    static func waitForExit(of process: Process) -> Int32 {
        while true {
            switch poll(process.processIdentifier) {
            case .exited(let status): return status
            case .reapedByFoundation:
                process.waitUntilExit()
                return process.terminationStatus
            case .running: usleep(5_000)
            }
        }
    }
}
