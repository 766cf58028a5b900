public import Foundation

/// How the sign-in log keeps a busy tenant's grants (issue 32; operations: "Sizing the sign-in log"). Interactive
/// sign-ins, every refusal and anything a report-only policy would have refused stay one record each; non-interactive
/// successes (refreshes, an app's own tokens, codes issued silently from a session) with the same facts in one window
/// become one record with a count, as Entra's non-interactive log aggregates them. "The same facts" is everything a
/// record keeps but its identity (ID, time, correlation ID): what the admin API shows, what impact analysis and a
/// conditional-access change replay, are the same for every sign-in an aggregate counts.
public enum SignInAggregation {
    /// Whether the record may be counted into an aggregate.
    public static func isAggregatable(_ record: SignInRecord) -> Bool {
        guard !record.interactive, record.errorCode == nil, record.conditionalAccessStatus != .failure else { return false }
        return !record.appliedConditionalAccessPolicies.contains { $0.result == .reportOnlyFailure }
    }

    /// The start of the window a time falls in (`window` seconds long, aligned to the epoch).
    public static func windowStart(of date: Date, window: TimeInterval) -> Date {
        guard window > 0 else { return date }
        return Date(timeIntervalSince1970: (date.timeIntervalSince1970 / window).rounded(.down) * window)
    }

    /// The record as it is stored: per-policy results only for the policies that applied or would have (report-only
    /// success or failure), `notApplied` and `notEnabled` implied by their absence; policy names not copied into every
    /// record (the log shows the tenant's current names).
    public static func compacted(_ record: SignInRecord) -> SignInRecord {
        var compact = record
        compact.appliedConditionalAccessPolicies = record.appliedConditionalAccessPolicies.compactMap { policy in
            switch policy.result {
            case .success, .failure, .reportOnlySuccess, .reportOnlyFailure:
                var kept = policy
                kept.displayName = ""
                kept.conditionsNotSatisfied = []
                return kept
            case .notApplied, .notEnabled, .reportOnlyNotApplied:
                return nil
            }
        }
        return compact
    }

    /// The record with its identity blanked: every record with the same facts has the same one, so that its encoding is
    /// an aggregate's key.
    public static func facts(of record: SignInRecord) -> SignInRecord {
        var facts = compacted(record)
        facts.id = ""
        facts.correlationId = ""
        facts.createdDateTime = Date(timeIntervalSince1970: 0)
        facts.aggregate = nil
        return facts
    }

    /// What a batch writes to the log, in the batch's order (an aggregate where its first sign-in came): a record kept
    /// one by one, or sign-ins counted together.
    public enum Entry: Sendable, Equatable {
        case record(SignInRecord)
        case aggregate(Pending)
    }

    /// Counts a batch of records into aggregates of `window` seconds and keeps the rest one by one, in the batch's order.
    /// `key` gives a record's facts key (the recorder's is the hash of its encoded facts).
    /// `key` is asked once per distinct facts and window (it may be costly: the recorder's encodes and hashes), with the
    /// facts (`facts(of:)`) and their digest: records are grouped by their facts compared as values, found through a
    /// cheap digest of a few of them.
    public static func aggregate(_ records: [SignInRecord], window: TimeInterval, key: (_ facts: SignInRecord, _ digest: Int) -> String) -> [Entry] {
        guard window > 0 else { return records.map(Entry.record) }
        var entries: [Entry] = []
        var slots: [Int: [(facts: SignInRecord, windowStart: Date, at: Int)]] = [:]
        for record in records {
            guard isAggregatable(record) else {
                entries.append(.record(record))
                continue
            }
            let facts = facts(of: record)
            let start = windowStart(of: record.createdDateTime, window: window)
            let slot = Self.digest(facts, windowStart: start)
            if let found = slots[slot]?.first(where: { $0.windowStart == start && $0.facts == facts }),
                case .aggregate(var pending) = entries[found.at]
            {
                pending.add(record)
                entries[found.at] = .aggregate(pending)
            } else {
                slots[slot, default: []].append((facts, start, entries.count))
                entries.append(.aggregate(Pending(first: record, key: key(facts, Self.digest(facts, windowStart: nil)), windowStart: start)))
            }
        }
        return entries
    }

    /// The same with a key of the facts alone (`facts(of:)` of the record).
    public static func aggregate(_ records: [SignInRecord], window: TimeInterval, key: (SignInRecord) -> String) -> [Entry] {
        aggregate(records, window: window) { facts, _ in key(facts) }
    }

    /// A cheap digest of a record's facts (and window): records with equal facts have equal digests.
    public static func digest(_ facts: SignInRecord, windowStart: Date?) -> Int {
        var hasher = Hasher()
        hasher.combine(facts.tenantId)
        hasher.combine(facts.userId)
        hasher.combine(facts.clientAppId)
        hasher.combine(facts.resourceAppId)
        hasher.combine(facts.ipAddress)
        hasher.combine(facts.grantType)
        hasher.combine(facts.appliedConditionalAccessPolicies.count)
        hasher.combine(windowStart)
        return hasher.finalize()
    }

    /// Sign-ins of one window with the same facts, counted: the first one's record, how many, the last one's time and
    /// correlation ID. Stores add it to the window's stored aggregate, or store it as a new one.
    public struct Pending: Sendable, Equatable {
        public var first: SignInRecord
        public var key: String
        public var windowStart: Date
        public var count: Int
        public var lastDateTime: Date
        public var lastCorrelationId: String

        public init(first: SignInRecord, key: String, windowStart: Date) {
            self.first = first
            self.key = key
            self.windowStart = windowStart
            self.count = 1
            self.lastDateTime = first.createdDateTime
            self.lastCorrelationId = first.correlationId
        }

        public mutating func add(_ record: SignInRecord) {
            count += 1
            if record.createdDateTime >= lastDateTime {
                lastDateTime = record.createdDateTime
                lastCorrelationId = record.correlationId
            }
            if record.createdDateTime < first.createdDateTime {
                var earlier = record
                earlier.aggregate = nil
                first = earlier
            }
        }

        /// The aggregate as a record of the log.
        public var record: SignInRecord {
            var record = first
            record.aggregate = SignInRecord.Aggregate(count: count, lastDateTime: lastDateTime, lastCorrelationId: lastCorrelationId)
            return record
        }
    }
}

extension Array where Element == SignInAggregation.Entry {
    /// The records kept one by one.
    public var records: [SignInRecord] {
        compactMap {
            if case .record(let record) = $0 { record } else { nil }
        }
    }

    /// The aggregates.
    public var aggregates: [SignInAggregation.Pending] {
        compactMap {
            if case .aggregate(let pending) = $0 { pending } else { nil }
        }
    }
}
