import Foundation
import Logging
import PortcullisCore
import PortcullisStorage
public import ServiceLifecycle

/// Periodic housekeeping as a `Service`: lapses enrollments past their grace period (emitting callbacks),
/// prunes app instances idle for `idleEnrollmentRetention`, and trims the sign-in log, expired tokens, old
/// callbacks and finished password-guessing counters.
public final class ComplianceSweeper: Service, Sendable {
    let compliance: ComplianceService
    let store: any PortcullisStore
    let clock: any WallClock
    let interval: Duration
    let idleEnrollmentRetention: TimeInterval
    let signInRetention: TimeInterval
    /// The sign-in log's size bound (0: none): each pass deletes the oldest records past it, at most
    /// `signInTrimPerPass` of them (a log far over its bound shrinks over several passes, none of them long).
    let signInMaximumBytes: Int64
    static let signInTrimBatch = 10_000
    static let signInTrimPerPass = 100_000
    let outboxRetention: TimeInterval
    /// Ends devices' grace periods that ran out without a check-in (`DeviceGraceSweep`); set once the documents exist.
    let devices: DeviceGraceSweep?
    let logger: Logger

    init(
        compliance: ComplianceService, store: any PortcullisStore, clock: any WallClock, interval: Duration,
        idleEnrollmentRetention: TimeInterval, signInRetention: TimeInterval, signInMaximumBytes: Int64 = 0, outboxRetention: TimeInterval,
        devices: DeviceGraceSweep? = nil, logger: Logger
    ) {
        self.devices = devices
        self.signInMaximumBytes = signInMaximumBytes
        self.outboxRetention = outboxRetention
        self.compliance = compliance
        self.store = store
        self.clock = clock
        self.interval = interval
        self.idleEnrollmentRetention = idleEnrollmentRetention
        self.signInRetention = signInRetention
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await self.sweep()
                do { try await Task.sleep(for: self.interval) } catch { break }
            }
        }
    }

    /// One pass. Errors are logged; the next pass tries again.
    public func sweep() async {
        await StoreDeadline.forMaintenance(.seconds(30)) { await sweepNow() }
    }

    private func sweepNow() async {
        let now = clock.now()
        do {
            let lapsed = try await compliance.lapseOverdue() + (devices?.lapse() ?? 0)
            let pruned = try await store.deleteIdleEnrollments(idleSince: now.addingTimeInterval(-idleEnrollmentRetention))
            var signIns = try await store.purgeSignIns(before: now.addingTimeInterval(-signInRetention))
            if signInMaximumBytes > 0 {
                var trimmed = 0
                while trimmed < Self.signInTrimPerPass {
                    let deleted = try await store.trimSignIns(toBytes: signInMaximumBytes, limit: Self.signInTrimBatch)
                    guard deleted > 0 else { break }
                    trimmed += deleted
                }
                signIns += trimmed
            }
            let tokens = try await store.purgeExpired(before: now)
            let callbacks = try await store.purgeOutbox(before: now.addingTimeInterval(-outboxRetention))
            let throttles = try await store.purgeThrottles(before: now)
            let interactive = try await store.purgeInteractive(before: now)
            if lapsed + pruned + signIns + tokens + callbacks + throttles + interactive > 0 {
                logger.info(
                    "sweep",
                    metadata: [
                        "portcullis.lapsed": .stringConvertible(lapsed), "portcullis.pruned_enrollments": .stringConvertible(pruned),
                        "portcullis.purged_sign_ins": .stringConvertible(signIns), "portcullis.purged_refresh_tokens": .stringConvertible(tokens),
                        "portcullis.purged_callbacks": .stringConvertible(callbacks), "portcullis.purged_throttles": .stringConvertible(throttles),
                        "portcullis.purged_interactive": .stringConvertible(interactive),
                    ])
            }
        } catch {
            logger.error("sweep failed", metadata: [LogKeys.error: .string("\(type(of: error))")])
        }
    }
}
