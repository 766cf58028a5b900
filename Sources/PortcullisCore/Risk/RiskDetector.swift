public import Foundation

/// An operator's list of addresses (PROTOCOL §19: anonymizers, malicious addresses): one CIDR range or address per
/// line, `#` comments and blank lines ignored. A line that does not read is refused with its number.
public struct AddressList: Sendable, Equatable {
    /// The ranges as 128-bit intervals, sorted and merged: a lookup is a binary search, whatever the list's length.
    let starts: [Bits]
    let ends: [Bits]
    /// How many ranges were read.
    public let count: Int

    struct Bits: Sendable, Equatable, Comparable {
        var high: UInt64
        var low: UInt64
        static func < (a: Bits, b: Bits) -> Bool { a.high != b.high ? a.high < b.high : a.low < b.low }
    }

    public static let maximumLines = 1_000_000

    public init(ranges: [IPRange]) {
        func mask(_ bits: Int) -> UInt64 { bits <= 0 ? 0 : bits >= 64 ? .max : ~(UInt64.max >> UInt64(bits)) }
        let intervals = ranges.map { range -> (Bits, Bits) in
            let highMask = mask(range.prefixLength)
            let lowMask = mask(range.prefixLength - 64)
            let start = Bits(high: range.network.high & highMask, low: range.network.low & lowMask)
            return (start, Bits(high: start.high | ~highMask, low: start.low | ~lowMask))
        }.sorted { $0.0 < $1.0 }
        var starts: [Bits] = []
        var ends: [Bits] = []
        for (start, end) in intervals {
            if let last = ends.last, !(last < start) {
                if last < end { ends[ends.count - 1] = end }
            } else {
                starts.append(start)
                ends.append(end)
            }
        }
        self.starts = starts
        self.ends = ends
        self.count = ranges.count
    }

    public static let empty = AddressList(ranges: [])

    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let text: String

        public init(line: Int, text: String) {
            self.line = line
            self.text = text
        }

        public var description: String { "line \(line): '\(text.prefix(64))' is neither an address nor a CIDR range" }
    }

    public static func parse(_ text: String) throws(Problem) -> AddressList {
        var ranges: [IPRange] = []
        var number = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            guard number <= maximumLines else { throw Problem(line: number, text: "(more than \(maximumLines) lines)") }
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !line.isEmpty else { continue }
            let cidr = line.contains("/") ? line : (line.contains(":") ? line + "/128" : line + "/32")
            guard let range = IPRange(cidr) else { throw Problem(line: number, text: line) }
            ranges.append(range)
        }
        return AddressList(ranges: ranges)
    }

    public func contains(_ address: IPAddress?) -> Bool {
        guard let address, !starts.isEmpty else { return false }
        let bits = Bits(high: address.high, low: address.low)
        // The last interval that starts at or before the address.
        var low = 0
        var high = starts.count
        while low < high {
            let middle = (low + high) / 2
            if bits < starts[middle] { high = middle } else { low = middle + 1 }
        }
        return low > 0 && !(ends[low - 1] < bits)
    }
}

/// The detections of PROTOCOL §19, computed from a sign-in's facts and the user's kept profile: pure, so the token path
/// pays for no store round trip (the profile is in the tenant's snapshot) and the rules are tested without a server.
public enum RiskDetector {
    /// What the operator's lists say.
    public struct Lists: Sendable {
        public var anonymizers: AddressList
        public var malicious: AddressList

        public init(anonymizers: AddressList = .empty, malicious: AddressList = .empty) {
            self.anonymizers = anonymizers
            self.malicious = malicious
        }
    }

    /// One sign-in as the detections see it.
    public struct SignIn: Sendable, Equatable {
        public var at: Date
        public var ipAddress: IPAddress?
        public var country: String?
        public var platform: DevicePlatform?
        public var clientAppId: AppID

        public init(at: Date, ipAddress: IPAddress?, country: String?, platform: DevicePlatform?, clientAppId: AppID) {
            self.at = at
            self.ipAddress = ipAddress
            self.country = country
            self.platform = platform
            self.clientAppId = clientAppId
        }
    }

    /// The real-time detections of a sign-in: a listed address (anonymizer, malicious), and — once the user's learning
    /// period is over — a country, platform or client application the profile has not seen.
    public static func realtime(_ signIn: SignIn, profile: SignInProfile?, lists: Lists) -> [RiskEventType] {
        var found: [RiskEventType] = []
        if lists.anonymizers.contains(signIn.ipAddress) { found.append(.anonymizedIPAddress) }
        if lists.malicious.contains(signIn.ipAddress) { found.append(.maliciousIPAddress) }
        if let profile, !unfamiliar(signIn, profile: profile).isEmpty { found.append(.unfamiliarFeatures) }
        return found
    }

    /// The risk an application's own sign-in carries into conditional access: its kept risk (its detections are offline).
    public static func facts(servicePrincipal: RiskyServicePrincipal?) -> RiskFacts {
        RiskFacts(servicePrincipal: servicePrincipal?.riskLevel ?? .none)
    }

    /// The risk a user's sign-in carries into conditional access: its real-time detections (the sign-in's level is the
    /// highest of theirs) and the user's kept risk.
    public static func facts(_ signIn: SignIn, user: RiskyUser?, lists: Lists) -> RiskFacts {
        let detections = realtime(signIn, profile: user?.profile, lists: lists)
        return RiskFacts(
            signIn: RiskLevel.highest(detections.map(\.level)), user: user?.riskLevel ?? .none, userRiskUpdated: user?.riskLastUpdatedDateTime,
            insider: user?.insiderRiskLevel, detections: detections)
    }

    /// The properties of a sign-in the learned profile has not seen (none before the learning period is over).
    public static func unfamiliar(_ signIn: SignIn, profile: SignInProfile) -> [String] {
        guard profile.learned(at: signIn.at) else { return [] }
        var properties: [String] = []
        if let country = signIn.country, profile.countries[country] == nil { properties.append("country \(country)") }
        if let platform = signIn.platform, profile.platforms[platform.rawValue] == nil { properties.append("platform \(platform.rawValue)") }
        if profile.clients[signIn.clientAppId.rawValue] == nil { properties.append("client \(signIn.clientAppId.rawValue)") }
        return properties
    }

    /// The fastest travel that is not atypical: faster than an airliner between two countries' centroids.
    public static let travelSpeed: Double = 900  // km/h
    /// Countries closer than this are never atypical travel (neighbours, and the centroids' imprecision).
    public static let travelMinimumDistance: Double = 500  // km

    /// Atypical travel (offline): the user was last seen in another country too recently to have travelled from there —
    /// the distance between the countries' centroids faster than `travelSpeed`. The other country's time is when it was
    /// last seen, to `SignInProfile.lastSeenGranularity` (so a trip is measured at most that much too long: a detection
    /// may be missed, never made up).
    public static func travel(_ signIn: SignIn, profile: SignInProfile) -> (from: String, kilometres: Double, hours: Double)? {
        guard let country = signIn.country, let here = CountryCentroids.table[country] else { return nil }
        var found: (from: String, kilometres: Double, hours: Double)?
        for (other, seen) in profile.countries where other != country {
            guard let there = CountryCentroids.table[other] else { continue }
            let kilometres = distance(here, there)
            let hours = max(signIn.at.timeIntervalSince(seen), 0) / 3_600
            guard kilometres >= travelMinimumDistance, kilometres > hours * travelSpeed else { continue }
            if found.map({ kilometres / max(hours, 0.01) > $0.kilometres / max($0.hours, 0.01) }) ?? true { found = (other, kilometres, hours) }
        }
        return found
    }

    /// Great-circle distance in kilometres.
    static func distance(_ a: (latitude: Double, longitude: Double), _ b: (latitude: Double, longitude: Double)) -> Double {
        let radians = Double.pi / 180
        let dLatitude = (b.latitude - a.latitude) * radians
        let dLongitude = (b.longitude - a.longitude) * radians
        let h =
            sin(dLatitude / 2) * sin(dLatitude / 2) + cos(a.latitude * radians) * cos(b.latitude * radians) * sin(dLongitude / 2) * sin(dLongitude / 2)
        return 6_371 * 2 * atan2(h.squareRoot(), (1 - h).squareRoot())
    }

    /// The profile after a successful sign-in: its country, platform and client familiar (seen now), and — an interactive
    /// one — counted towards the learning period (refreshes repeat their sign-in: counting them would end the learning
    /// early and write at each). `nil` when nothing changed (the common case once learned: nothing is written).
    public static func learn(_ signIn: SignIn, profile: SignInProfile, interactive: Bool = true) -> SignInProfile? {
        var next = profile
        if interactive {
            if next.firstSignIn == nil { next.firstSignIn = signIn.at }
            if next.signIns < SignInProfile.learningSignIns { next.signIns += 1 }
        }
        func see(_ value: String?, in values: inout [String: Date]) {
            guard let value else { return }
            if let seen = values[value], signIn.at.timeIntervalSince(seen) < SignInProfile.lastSeenGranularity { return }
            values[value] = signIn.at
            if values.count > SignInProfile.maximumValues, let oldest = values.min(by: { $0.value < $1.value })?.key { values[oldest] = nil }
        }
        see(signIn.country, in: &next.countries)
        see(signIn.platform?.rawValue, in: &next.platforms)
        see(signIn.clientAppId.rawValue, in: &next.clients)
        return next == profile ? nil : next
    }

    /// Password spray (PROTOCOL §19): wrong passwords for at least this many distinct accounts from one address within
    /// `sprayWindow` flag a later successful sign-in from it.
    public static let sprayAccounts = 20
    public static let sprayWindow: TimeInterval = 3_600

    /// The address's spray counter in the throttle store: distinct accounts given wrong passwords from it in the window.
    public static func sprayKey(tenantId: TenantID, address: IPAddress?) -> String {
        "spray:\(tenantId.rawValue):" + LockoutPolicy.Subject.address(address).key
    }

    /// One account's mark under an address: it counts once per window however many passwords it is tried with.
    public static func sprayedAccountKey(tenantId: TenantID, address: IPAddress?, userId: ObjectID) -> String {
        sprayKey(tenantId: tenantId, address: address) + ":" + userId.rawValue
    }

    /// A wrong password for an account from an address: its mark (kept as it is within the window) and whether it is new.
    public static func markSprayed(_ current: ThrottleCounter?, key: String, now: Date) -> (counter: ThrottleCounter, new: Bool) {
        if let current, current.windowStart.addingTimeInterval(sprayWindow) > now { return (current, false) }
        return (ThrottleCounter(key: key, failures: 1, windowStart: now, locks: 0, lockedUntil: nil, expiresAt: now.addingTimeInterval(sprayWindow)), true)
    }

    /// The address's counter with one more account (a new window when the last one is over).
    public static func countSprayed(_ current: ThrottleCounter?, key: String, now: Date) -> ThrottleCounter {
        guard var counter = current, counter.windowStart.addingTimeInterval(sprayWindow) > now else {
            return ThrottleCounter(key: key, failures: 1, windowStart: now, locks: 0, lockedUntil: nil, expiresAt: now.addingTimeInterval(sprayWindow))
        }
        counter.failures += 1
        return counter
    }

    /// Whether a successful sign-in at `now` comes from an address the counter shows spraying.
    public static func sprayed(_ counter: ThrottleCounter?, at now: Date) -> Bool {
        guard let counter else { return false }
        return counter.failures >= sprayAccounts && now.timeIntervalSince(counter.windowStart) <= sprayWindow
    }
}
