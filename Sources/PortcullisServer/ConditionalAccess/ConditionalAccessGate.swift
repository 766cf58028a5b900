import Foundation
import Logging
import PortcullisCore
import PortcullisStorage

/// What the compliance service knows about an account's use of a client application.
public protocol AppProtectionStatusProvider: Sendable {
    /// The app-protection fact for (tenant, user, client), restricted to `enrollmentId` when the client named
    /// one (`microsoft_enrollment_id`), and the platform that enrollment recorded.
    func appProtection(tenantId: String, userId: String, clientId: String, enrollmentId: String?, now: Date) async throws
        -> (fact: SignInFacts.AppProtection, platform: DevicePlatform?)
}

/// Conditional access on the token path: builds the facts of a grant, evaluates the tenant's compiled
/// policies, records the sign-in, and turns a refusal into the exact AADSTS error (PROTOCOL §2.5).
struct ConditionalAccessGate: Sendable {
    let configuration: ServerConfiguration
    let appProtection: any AppProtectionStatusProvider
    let recorder: SignInRecorder
    let logger: Logger

    struct Inputs {
        var grantType: GrantType
        var client: Application
        var user: User?
        var groupIds: [String]
        var resource: Application
        var audience: String
        var capabilities: ClaimsRequest
        var clientIP: IPAddress?
        var platform: DevicePlatform?
        var enrollmentId: String?
        var correlationId: String
    }

    /// Returns the compliant enrollment that satisfied app protection (if one was consulted), or throws
    /// the refusal.
    func check(_ inputs: Inputs, snapshot: TenantSnapshot, now: Date) async throws -> String? {
        var facts = SignInFacts(
            userId: inputs.user?.id, groupIds: inputs.groupIds, clientAppId: inputs.client.appId, resourceAppId: inputs.resource.appId,
            clientAppType: .mobileAppsAndDesktopClients, platform: inputs.platform, ipAddress: inputs.clientIP,
            capabilities: inputs.capabilities.capabilities, appProtection: .none, approvedClientApp: inputs.client.approvedClientApp,
            multiFactorAuthenticated: false)
        var decision = snapshot.conditionalAccess.evaluate(facts)
        // The compliance service is asked only when a policy demands app protection (or a platform is
        // still unknown and the enrollment could tell it), so most grants never pay for the lookup.
        var enrollment: String?
        let platformUnknownMatters = facts.platform == nil && decision.policies.contains { $0.conditionsNotSatisfied.contains("devicePlatform") }
        if let user = inputs.user, decision.requiresAppProtection || platformUnknownMatters {
            let status = try await appProtection.appProtection(
                tenantId: snapshot.tenant.id, userId: user.id, clientId: inputs.client.appId, enrollmentId: inputs.enrollmentId, now: now)
            facts.appProtection = status.fact
            if facts.platform == nil { facts.platform = status.platform }
            if case .compliant(let id) = status.fact { enrollment = id }
            decision = snapshot.conditionalAccess.evaluate(facts)
        }
        let refusal = decision.refusal.map { error(for: $0, facts: facts, user: inputs.user, tenantId: snapshot.tenant.id) }
        recorder.record(SignInRecord(
            id: UUID().uuidString.lowercased(), createdDateTime: now, correlationId: inputs.correlationId, tenantId: snapshot.tenant.id,
            userId: inputs.user?.id, userPrincipalName: inputs.user?.userPrincipalName, clientAppId: inputs.client.appId,
            resourceAppId: inputs.resource.appId, resource: inputs.audience, grantType: inputs.grantType.rawValue,
            clientAppType: facts.clientAppType.rawValue, capabilities: facts.capabilities, ipAddress: facts.ipAddress?.description,
            platform: facts.platform?.rawValue, appProtection: Self.describe(facts.appProtection),
            conditionalAccessStatus: decision.status, appliedConditionalAccessPolicies: decision.policies, errorCode: refusal?.aadsts))
        if let refusal {
            logger.info("conditional access refused the grant", metadata: [
                LogKeys.decision: .string("AADSTS\(refusal.aadsts)"), LogKeys.clientId: .string(inputs.client.appId),
                LogKeys.policyId: .string(decision.policies.filter { $0.result == .failure }.map(\.id).joined(separator: ",")),
            ])
            throw refusal
        }
        return enrollment
    }

    func error(for refusal: Decision.Refusal, facts: SignInFacts, user: User?, tenantId: String) -> TokenError {
        switch refusal {
        case .block: return .blockedByConditionalAccess
        case .mfa: return .mfaRequired
        case .approvedApplication: return .approvedClientAppRequired
        case .compliantApplication(let policyIds):
            guard facts.declaresProtApp, let user else { return .protAppCapabilityRequired }
            return .protectionPolicyRequired(RemediationRequirement(
                objectId: user.id, tenantId: tenantId, userPrincipalName: user.userPrincipalName, policyIds: policyIds,
                endpoint: "\(configuration.baseURL)/mam/v1/remediations"))
        }
    }

    static func describe(_ fact: SignInFacts.AppProtection) -> String {
        switch fact {
        case .compliant: "compliant"
        case .notCompliant: "notCompliant"
        case .none: "none"
        }
    }
}
