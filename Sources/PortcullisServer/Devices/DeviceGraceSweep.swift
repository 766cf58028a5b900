import Foundation
import PortcullisCore
import PortcullisStorage

/// Ends the grace periods that ran out without a check-in (PROTOCOL §18): a device still marked compliant whose
/// `complianceGracePeriodExpirationDateTime` has passed is stored not compliant, through the devices' write path — so
/// its owners' receivers hear `device-compliance-change` (and `session-revoked`) as after a failed check-in. Conditional
/// access already reads compliance as of the sign-in's time; this is for the tokens resource servers hold. Nodes that
/// sweep the same device at once: the version precondition lets one write, the other's write is refused and skipped.
struct DeviceGraceSweep: Sendable {
    let devices: DocumentResource<Device>
    let tenants: TenantCache
    let clock: any WallClock

    /// How many devices it marked not compliant.
    func lapse() async throws -> Int {
        let now = clock.now()
        var lapsed = 0
        for snapshot in try await tenants.snapshots().values {
            for device in snapshot.contents.devices where device.isCompliant && !device.isCompliant(at: now) {
                guard let stored = try await devices.read(snapshot, id: device.id.rawValue), stored.document == device else { continue }
                var ended = device
                ended.isCompliant = false
                do {
                    _ = try await devices.save(
                        ended, before: stored, precondition: .version(stored.version), tenant: snapshot, actor: "system (grace period ended)")
                    lapsed += 1
                } catch let error as StorageError where error.code == .preconditionFailed {
                    continue  // another node (or a check-in) wrote it first
                }
            }
        }
        return lapsed
    }
}
