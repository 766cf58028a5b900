public import Foundation
public import PortcullisAPI
import Synchronization

/// What a receiver of compliance callbacks checks besides the signature (RFC 8417 §2.2, RFC 8935 §2): the
/// header's `typ` is `secevent+jwt`, the issuer is the authority's, the audience is this app, `iat` is
/// recent, and the `jti` was not seen before (a retry of an event already handled is acknowledged but
/// not acted on twice). The signature itself is checked against the authority's JWKS by the caller.
/// Remembers at most `capacity` identifiers, each for `maximumAge`.
public final class SecurityEventChecks: Sendable {
    public enum Verdict: Equatable, Sendable {
        case accept
        /// Seen before: acknowledge (202) so the sender stops, but do not act again.
        case duplicate
        case reject(String)
    }

    public let issuer: String
    public let audience: String
    public let maximumAge: TimeInterval
    public let capacity: Int
    private struct Memory {
        var seen: [String: Date] = [:]
        var order: [(jti: String, at: Date)] = []
    }
    private let memory = Mutex(Memory())

    public init(issuer: String, audience: String, maximumAge: TimeInterval = 3600, capacity: Int = 10_000) {
        self.issuer = issuer
        self.audience = audience
        self.maximumAge = maximumAge
        self.capacity = max(1, capacity)
    }

    /// `header` is the decoded JOSE header of the verified SET, `event` its payload.
    public func check(header: [String: Any], event: ComplianceSecurityEvent, now: Date) -> Verdict {
        guard (header["typ"] as? String)?.lowercased() == "secevent+jwt" else {
            return .reject("typ is \((header["typ"] as? String).map { "'\($0)'" } ?? "absent"), not 'secevent+jwt'")
        }
        guard event.iss == issuer else { return .reject("issuer '\(event.iss)' is not '\(issuer)'") }
        guard event.aud.lowercased() == audience.lowercased() else { return .reject("audience '\(event.aud)' is not this app ('\(audience)')") }
        let issued = Date(timeIntervalSince1970: TimeInterval(event.iat))
        if issued > now.addingTimeInterval(300) { return .reject("iat is in the future") }
        if now.timeIntervalSince(issued) > maximumAge { return .reject("iat is older than \(Int(maximumAge)) s") }
        let capacity = self.capacity
        let limit = now.addingTimeInterval(-maximumAge)
        return memory.withLock { memory in
            // Identifiers older than the age limit cannot come back (their iat would be refused).
            var dropped = 0
            while dropped < memory.order.count, memory.order[dropped].at < limit {
                memory.seen[memory.order[dropped].jti] = nil
                dropped += 1
            }
            if dropped > 0 { memory.order.removeFirst(dropped) }
            if memory.seen[event.jti] != nil { return .duplicate }
            if memory.order.count >= capacity, let oldest = memory.order.first {
                memory.order.removeFirst()
                memory.seen[oldest.jti] = nil
            }
            memory.seen[event.jti] = issued
            memory.order.append((event.jti, issued))
            return .accept
        }
    }

    /// The decoded header of a compact JWS, or `nil`.
    public static func header(of token: String) -> [String: Any]? {
        guard let first = token.split(separator: ".", omittingEmptySubsequences: false).first,
            let data = Base64URL.decode(String(first))
        else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}
