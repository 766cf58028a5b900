import Foundation

extension AppProtectionSettings {
    /// The most restrictive combination of several policies' settings, member by member (documented in
    /// docs/decisions.md): booleans OR; minimum versions the highest; location rules blocked if any blocks,
    /// allowing only what every blocking policy allows; transfer and notification levels the most
    /// restrictive; intervals the shortest. Absent members do not restrict. Defaults fill what none set.
    public static func merge(_ all: [AppProtectionSettings]) -> AppProtectionSettings {
        var merged = AppProtectionSettings()
        func or(_ values: [Bool?]) -> Bool { values.contains(true) }
        merged.pinRequired = or(all.map(\.pinRequired))
        merged.blockJailbrokenDevices = or(all.map(\.blockJailbrokenDevices))
        merged.fileEncryptionRequired = or(all.map(\.fileEncryptionRequired))
        merged.printingBlocked = or(all.map(\.printingBlocked))
        merged.screenCaptureBlocked = or(all.map(\.screenCaptureBlocked))
        merged.minimumOsVersion = all.compactMap(\.minimumOsVersion).max(by: { SoftwareVersion.compare($0, $1) < 0 })
        merged.minimumAppVersion = all.compactMap(\.minimumAppVersion).max(by: { SoftwareVersion.compare($0, $1) < 0 })
        merged.saveAs = mergeRules(all.compactMap(\.saveAs), order: SaveLocation.allCases)
        merged.openFrom = mergeRules(all.compactMap(\.openFrom), order: OpenLocation.allCases)
        let transfers = all.compactMap(\.dataTransfer)
        merged.dataTransfer = DataTransfer(
            sendOrgData: transfers.map(\.sendOrgData).max(by: { $0.restrictiveness < $1.restrictiveness }) ?? .allApps,
            receiveData: transfers.map(\.receiveData).max(by: { $0.restrictiveness < $1.restrictiveness }) ?? .allApps)
        merged.notificationPolicy = all.compactMap(\.notificationPolicy).max(by: { $0.restrictiveness < $1.restrictiveness }) ?? .allow
        merged.recheckIntervalMinutes = all.compactMap(\.recheckIntervalMinutes).min() ?? defaultRecheckIntervalMinutes
        merged.offlineGracePeriodMinutes = all.compactMap(\.offlineGracePeriodMinutes).min() ?? defaultOfflineGracePeriodMinutes
        return merged
    }

    static func mergeRules<L>(_ rules: [LocationRule<L>], order: [L]) -> LocationRule<L> {
        let blocking = rules.filter(\.blocked)
        guard !blocking.isEmpty else { return LocationRule(blocked: false, allowedLocations: []) }
        let allowed = order.filter { location in blocking.allSatisfy { $0.allowedLocations.contains(location) } }
        return LocationRule(blocked: true, allowedLocations: allowed)
    }

    /// A short, stable fingerprint of these settings (FNV-1a over the canonical JSON): the merged policy's
    /// version, which changes exactly when what the app must apply changes.
    public var fingerprint: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes = (try? encoder.encode(self)) ?? Data()
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// Dotted software versions (`17.4.1`), compared numerically component by component.
public enum SoftwareVersion {
    public static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return !parts.isEmpty && parts.count <= 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 6 && $0.allSatisfy(\.isNumber) && $0.allSatisfy(\.isASCII) }
    }

    /// -1, 0 or 1. Missing components count as 0 (`17` == `17.0`); non-numeric text compares as 0.
    public static func compare(_ a: String, _ b: String) -> Int {
        let x = a.split(separator: ".").map { Int($0) ?? 0 }
        let y = b.split(separator: ".").map { Int($0) ?? 0 }
        for i in 0..<max(x.count, y.count) {
            let l = i < x.count ? x[i] : 0
            let r = i < y.count ? y[i] : 0
            if l != r { return l < r ? -1 : 1 }
        }
        return 0
    }
}
