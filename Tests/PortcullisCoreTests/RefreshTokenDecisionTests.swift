import Foundation
import PortcullisCore
import Testing

@Suite("refresh token decisions")
struct RefreshTokenDecisionTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static func record(
        used: Bool = false, revoked: Bool = false, expiresIn: TimeInterval = 60, client: String = "c", tenant: String = "t"
    ) -> RefreshTokenRecord {
        RefreshTokenRecord(
            tokenHash: "h", familyId: "f", tenantId: TenantID(tenant), userId: "u", clientId: AppID(client), scope: "openid",
            issuedAt: now.addingTimeInterval(-10), expiresAt: now.addingTimeInterval(expiresIn),
            usedAt: used ? now.addingTimeInterval(-5) : nil, familyRevokedAt: revoked ? now.addingTimeInterval(-1) : nil)
    }

    @Test("the table")
    func table() {
        #expect(RefreshTokenDecision.decide(record: Self.record(), tenantId: "t", clientId: "c", now: Self.now) == .redeem)
        #expect(RefreshTokenDecision.decide(record: Self.record(), tenantId: "t", clientId: "C", now: Self.now) == .redeem)
        #expect(RefreshTokenDecision.decide(record: nil, tenantId: "t", clientId: "c", now: Self.now) == .reject(.refreshTokenInvalid))
        #expect(RefreshTokenDecision.decide(record: Self.record(tenant: "x"), tenantId: "t", clientId: "c", now: Self.now) == .reject(.refreshTokenInvalid))
        #expect(
            RefreshTokenDecision.decide(record: Self.record(client: "other"), tenantId: "t", clientId: "c", now: Self.now) == .reject(.refreshTokenWrongClient))
        #expect(
            RefreshTokenDecision.decide(record: Self.record(used: true), tenantId: "t", clientId: "c", now: Self.now)
                == .revokeFamilyAndReject(.refreshTokenReused))
        #expect(
            RefreshTokenDecision.decide(record: Self.record(used: true, revoked: true), tenantId: "t", clientId: "c", now: Self.now)
                == .reject(.refreshTokenRevoked))
        #expect(RefreshTokenDecision.decide(record: Self.record(revoked: true), tenantId: "t", clientId: "c", now: Self.now) == .reject(.refreshTokenRevoked))
        #expect(RefreshTokenDecision.decide(record: Self.record(expiresIn: 0), tenantId: "t", clientId: "c", now: Self.now) == .reject(.refreshTokenExpired))
    }
}
