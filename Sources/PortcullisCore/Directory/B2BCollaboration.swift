import Foundation

/// An invitation of a user of another tenant of this installation (Graph `invitation`, PROTOCOL §17): who was invited,
/// as what, and the B2B collaboration user it made in the inviting tenant. This server sends no mail; the guest
/// redeems just in time, by signing in at the inviting tenant with the home tenant's credentials.
public struct Invitation: Codable, Sendable, Equatable {
    public var id: PolicyID
    public var invitedUserEmailAddress: String
    public var invitedUserDisplayName: String?
    /// Where the guest goes after redeeming (Graph requires it).
    public var inviteRedirectUrl: String
    /// Where the guest redeems: the redirect URL, as no consent page stands between (redemption is the first sign-in).
    public var inviteRedeemUrl: String
    public var invitedUserType: User.UserType
    public var invitedUser: InvitedUser
    /// Graph's status: `Completed` (the B2B user exists).
    public var status: String
    public var sendInvitationMessage: Bool

    public struct InvitedUser: Codable, Sendable, Equatable {
        public var id: ObjectID
        public init(id: ObjectID) { self.id = id }
    }

    public init(
        id: PolicyID, invitedUserEmailAddress: String, invitedUserDisplayName: String?, inviteRedirectUrl: String, invitedUserType: User.UserType,
        invitedUserId: ObjectID
    ) {
        self.id = id
        self.invitedUserEmailAddress = invitedUserEmailAddress
        self.invitedUserDisplayName = invitedUserDisplayName
        self.inviteRedirectUrl = inviteRedirectUrl
        self.inviteRedeemUrl = inviteRedirectUrl
        self.invitedUserType = invitedUserType
        self.invitedUser = InvitedUser(id: invitedUserId)
        self.status = "Completed"
        self.sendInvitationMessage = false
    }

    /// What an admin asks (Graph's `invitation` body): the invitee's address, the redirect URL, a display name, the user type.
    public struct Request: Sendable, Equatable {
        public var emailAddress: String
        public var displayName: String?
        public var redirectUrl: String
        public var userType: User.UserType
        /// The invitee's domain: the verified domain of the tenant that is their home.
        public var domain: String { emailAddress.split(separator: "@").last.map { $0.lowercased() } ?? "" }
    }

    /// Reads Graph's invitation body, every problem at its pointer. `sendInvitationMessage: true` is refused: this
    /// server sends no mail (the admin shares `inviteRedeemUrl`).
    public static func parse(_ value: JSONValue) throws -> Request {
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(value, at: "", problems: problems) else {
            try problems.check()
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "must be a JSON object.")])
        }
        reader.rejectUnknownGraphMembers(
            allowed: ["invitedUserEmailAddress", "invitedUserDisplayName", "inviteRedirectUrl", "invitedUserType", "sendInvitationMessage"],
            readOnly: ["id", "inviteRedeemUrl", "status", "invitedUser"])
        let email = reader.string("invitedUserEmailAddress", required: true)
        if let email, email.split(separator: "@", omittingEmptySubsequences: false).count != 2 || email.count > 256 || email.contains(" ") {
            problems.add("/invitedUserEmailAddress", "must be an address, name@domain (at most 256 characters).")
        }
        let redirect = reader.string("inviteRedirectUrl", required: true)
        if let redirect, URL(string: redirect).map({ ["https", "http"].contains($0.scheme?.lowercased() ?? "") && $0.host != nil }) != true {
            problems.add("/inviteRedirectUrl", "must be an absolute http or https URL.")
        }
        let displayName = reader.string("invitedUserDisplayName")
        if let displayName, displayName.count > 256 { problems.add("/invitedUserDisplayName", "is longer than 256 characters.") }
        let type = reader.enumeration("invitedUserType", allowed: User.UserType.allCases.map(\.rawValue)).flatMap(User.UserType.init(rawValue:))
        if reader.bool("sendInvitationMessage") == true {
            problems.add("/sendInvitationMessage", "this server sends no mail: leave it false and give the invited user the inviteRedeemUrl.")
        }
        try problems.check()
        guard let email, let redirect else { throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not an invitation.")]) }
        return Request(emailAddress: email, displayName: displayName, redirectUrl: redirect, userType: type ?? .guest)
    }

    /// The B2B collaboration user an invitation makes in the inviting tenant for `home`, a user of `homeTenant`: its
    /// object ID follows from the two (an invitation retried makes the same user), its UPN is Entra's `#EXT#` form, it
    /// has no password here. `existing`: the tenant's B2B user for that home account already, kept (a re-invitation).
    public static func collaborationUser(
        _ request: Request, home: User, homeTenant: Tenant, resourceTenant: Tenant, existing: User?
    ) -> User {
        if let existing { return existing }
        let id = ObjectID(StableGUID.make(from: "b2b:\(resourceTenant.id):\(home.id)"))
        var user = User(
            id: id, userPrincipalName: User.externalPrincipalName(homePrincipalName: home.userPrincipalName, resourceDomain: resourceTenant.domain),
            displayName: request.displayName ?? home.displayName)
        user.userType = request.userType
        user.homeAccount = User.HomeAccount(tenantId: homeTenant.id, userId: home.id, userPrincipalName: home.userPrincipalName)
        return user
    }
}

/// A tenant's cross-tenant access setting for one partner tenant (Graph `crossTenantAccessPolicyConfigurationPartner`,
/// PROTOCOL §17): whether the partner's multifactor authentication counts here for its users who sign in as B2B
/// collaboration users. Without one, nothing of the home tenant's is trusted (Entra's default).
public struct CrossTenantAccessPartner: Codable, Sendable, Equatable {
    public var tenantId: TenantID
    public var inboundTrust: InboundTrust

    /// Graph's `crossTenantAccessPolicyInboundTrust`. The device claims wait for devices (§18): `true` is refused.
    public struct InboundTrust: Codable, Sendable, Equatable {
        public var isMfaAccepted: Bool
        public var isCompliantDeviceAccepted: Bool
        public var isHybridAzureADJoinedDeviceAccepted: Bool

        public init(isMfaAccepted: Bool = false) {
            self.isMfaAccepted = isMfaAccepted
            self.isCompliantDeviceAccepted = false
            self.isHybridAzureADJoinedDeviceAccepted = false
        }
    }

    public init(tenantId: TenantID, inboundTrust: InboundTrust) {
        self.tenantId = tenantId
        self.inboundTrust = inboundTrust
    }

    /// Reads Graph's partner configuration (`tenantId`, `inboundTrust`), every problem at its pointer; `ownTenantId` may
    /// not be its own partner.
    public static func parse(_ value: JSONValue, ownTenantId: TenantID) throws -> CrossTenantAccessPartner {
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(value, at: "", problems: problems) else {
            try problems.check()
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "must be a JSON object.")])
        }
        reader.rejectUnknownGraphMembers(allowed: ["tenantId", "inboundTrust"], readOnly: ["isServiceProvider", "isInMultiTenantOrganization"])
        let tenantId = reader.string("tenantId", required: true)
        if let tenantId {
            if !tenantId.isGUID {
                problems.add("/tenantId", "must be a GUID (8-4-4-4-12 hexadecimal digits).")
            } else if TenantID(tenantId) == ownTenantId {
                problems.add("/tenantId", "is this tenant: a partner is another tenant.")
            }
        }
        var trust = InboundTrust()
        if let inbound = reader.object("inboundTrust") {
            inbound.rejectUnknownGraphMembers(allowed: ["isMfaAccepted", "isCompliantDeviceAccepted", "isHybridAzureADJoinedDeviceAccepted"])
            trust.isMfaAccepted = inbound.bool("isMfaAccepted") ?? false
            for claim in ["isCompliantDeviceAccepted", "isHybridAzureADJoinedDeviceAccepted"] where inbound.bool(claim) == true {
                problems.add(inbound.path(claim), "device claims cannot be trusted by this server yet: it has no devices (PROTOCOL §18).")
            }
        }
        try problems.check()
        guard let tenantId else { throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not a partner configuration.")]) }
        return CrossTenantAccessPartner(tenantId: TenantID(tenantId), inboundTrust: trust)
    }
}

extension CrossTenantAccessPartner {
    /// How a B2B collaboration user's authentication at home counts in the resource tenant (PROTOCOL §17): all of it
    /// when the resource tenant trusts the home tenant's multifactor authentication, otherwise as a first factor only
    /// (the resource tenant asks for its own second factor, as Entra does by default).
    public static func counted(_ home: AuthenticationContext, trust: InboundTrust?) -> AuthenticationContext {
        if trust?.isMfaAccepted == true { return home }
        return AuthenticationContext(methods: ["pwd"], time: home.time)
    }
}
