public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Launching and reaping child processes in tests without trusting Foundation's exit monitoring.
///
/// swift-corelibs-foundation's `Process` missed the exit of one of two servers launched at the same time
/// (seen twice in full-suite runs): the child stayed a zombie, `isRunning` stayed true, `terminationStatus`
/// trapped and `waitUntilExit` never returned. So launches are serialised (every launch of the test process, from
/// any test target) and exits are read with our own `waitpid`.
///
/// `Process.run` also crashes the whole test process when the process has about 1,360 descriptors open: to find the
/// highest open descriptor it copies each `/proc/self/fd` entry's name as a full 256-byte `d_name`, which reads past
/// the end of readdir's 32 KiB buffer once the entries fill it (SIGSEGV in `__memcpy_avx512_unaligned_erms` under
/// `Process.run()`, seen in CI and reproduced locally with ~1,600 descriptors open at the suite's busiest moment). So a
/// launch waits until the process has fewer than `descriptorCeiling` open, and fails with a clear error if that does
/// not happen; scripts/test also bounds the suite's parallelism so that it stays far below (docs/quirks.md).
public enum ChildProcess {
    private static let launchLock = NSLock()
    /// Well below the ~1,360 entries at which `Process.run` reads past readdir's buffer.
    public static let descriptorCeiling = 900

    public struct TooManyDescriptors: Error, CustomStringConvertible {
        public let open: Int
        public var description: String {
            "the test process kept \(open) descriptors open for two minutes; Foundation's Process.run would crash above ~1,360 (docs/quirks.md)"
        }
    }

    /// Launches `process` once fewer than `descriptorCeiling` descriptors are open, waiting (asleep, so that the tests
    /// holding them go on and close them) up to two minutes; `TooManyDescriptors` then.
    public static func launch(_ process: Process) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while true {
            let open: Int? = try launchLock.withLock {
                if let open = openDescriptors(), open >= descriptorCeiling { return open }
                try process.run()
                return nil
            }
            guard let open else { return }
            guard ContinuousClock.now < deadline else { throw TooManyDescriptors(open: open) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// How many descriptors this process has open: the entries of `/proc/self/fd` (counted, their names never read),
    /// less `.`, `..` and the directory's own; nil without `/proc`.
    public static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var entries = 0
        while readdir(directory) != nil { entries += 1 }
        return max(0, entries - 3)
    }

    public enum State: Equatable {
        case running
        /// Exit status, or 128 + the signal that ended it.
        case exited(Int32)
        /// Foundation reaped it first; its `terminationStatus` is then the source.
        case reapedByFoundation
    }

    public static func poll(_ pid: pid_t) -> State {
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
    public static func exitStatus(of process: Process, timeout: Duration) async -> Int32? {
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
    public static func waitForExit(of process: Process) -> Int32 {
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
