import Foundation
import PortcullisCore
import PortcullisTokens

/// A sign-in described for what-if (PROTOCOL §11): from the admin API's JSON (`signIn`) or the console's form.
/// Names stay as given until `facts` resolves them against the tenant, each problem at its pointer.
struct WhatIfSignIn: Sendable {
    var userId: String?
    var clientAppId: String
    var resourceAppId: String
    var platform: String?
    var ipAddress: String?
    var clientAppType: SignInFacts.ClientAppType = .mobileAppsAndDesktopClients
    var capabilities: [String] = []
    var appProtection: SignInFacts.AppProtection = .none
    var approvedClientApp: Bool?
    var mfa = false
    /// A sign-in transferred from another device (PROTOCOL §13): `deviceCodeFlow` describes a device code grant.
    var transferMethod: TransferMethod?
    /// The authentication contexts the sign-in asks for (PROTOCOL §13, `acrs`).
    var authenticationContexts: [String] = []
    /// The request carries a DPoP proof, so its tokens would be bound (PROTOCOL §15, `secureSignInSession`).
    var dpop = false
    /// The device proven at sign-in, in Graph's `deviceInfo` shape (PROTOCOL §18); `nil`: unregistered.
    var device: DeviceFacts?
    /// Risk (PROTOCOL §19): as described; the user's and the insider level default to what is kept for the user now.
    var signInRiskLevel: RiskLevel?
    var userRiskLevel: RiskLevel?
    var insiderRiskLevel: InsiderRiskLevel?
    var servicePrincipalRiskLevel: RiskLevel?
    /// How the client authenticates (PROTOCOL §21): a secret by default for a confidential client, nothing for a public one.
    var clientCredential: ClientCredentialType?

    static let members: Set<String> = [
        "userId", "servicePrincipalId", "clientAppId", "resourceAppId", "platform", "ipAddress", "clientAppType", "capabilities",
        "appProtection", "approvedClientApp", "mfa", "transferMethod", "authenticationContexts", "dpop", "device", "signInRiskLevel", "userRiskLevel",
        "insiderRiskLevel", "servicePrincipalRiskLevel", "clientCredentialType",
    ]

    /// Reads the risk members (the admin API's and Graph's `signInConditions` spell them alike).
    mutating func readRisk(_ reader: JSONObjectReader) {
        let levels = RiskLevel.computed.map(\.rawValue)
        signInRiskLevel = reader.enumeration("signInRiskLevel", allowed: levels).flatMap(RiskLevel.init)
        userRiskLevel = reader.enumeration("userRiskLevel", allowed: levels).flatMap(RiskLevel.init)
        servicePrincipalRiskLevel = reader.enumeration("servicePrincipalRiskLevel", allowed: levels).flatMap(RiskLevel.init)
        insiderRiskLevel = reader.enumeration("insiderRiskLevel", allowed: InsiderRiskLevel.allCases.map(\.rawValue)).flatMap(InsiderRiskLevel.init)
    }

    /// The API's `signIn` object, its shape checked (types, enumerations, unknown members).
    static func read(_ reader: JSONObjectReader) -> WhatIfSignIn? {
        reader.rejectUnknownMembers(allowed: members)
        let userId = reader.string("userId")
        let clientAppId = reader.string("clientAppId", required: true)
        let resourceAppId = reader.string("resourceAppId", required: true)
        let platform = reader.string("platform")
        let ipAddress = reader.string("ipAddress")
        let type = reader.enumeration("clientAppType", allowed: SignInFacts.ClientAppType.modern.map(\.rawValue)).flatMap(
            SignInFacts.ClientAppType.init(rawValue:))
        let capabilities = (reader.strings("capabilities") ?? []).map(\.value)
        let protection: SignInFacts.AppProtection =
            switch reader.enumeration("appProtection", allowed: ["compliant", "notCompliant", "none"]) {
            case "compliant": .compliant(enrollmentId: "what-if")
            case "notCompliant": .notCompliant
            default: .none
            }
        let approved = reader.bool("approvedClientApp")
        let mfa = reader.bool("mfa") ?? false
        let transfer = reader.enumeration("transferMethod", allowed: TransferMethod.allCases.map(\.rawValue)).flatMap(TransferMethod.init(rawValue:))
        var contexts: [String] = []
        for (id, pointer) in reader.strings("authenticationContexts") ?? [] {
            if let normal = AuthenticationContextClassReference.normalized(id) {
                contexts.append(normal)
            } else {
                reader.problems.add(pointer, "must be c1 to c99.")
            }
        }
        guard let clientAppId, let resourceAppId else { return nil }
        var signIn = WhatIfSignIn(
            userId: userId, clientAppId: clientAppId, resourceAppId: resourceAppId, platform: platform, ipAddress: ipAddress,
            clientAppType: type ?? .mobileAppsAndDesktopClients, capabilities: capabilities, appProtection: protection,
            approvedClientApp: approved, mfa: mfa, transferMethod: transfer)
        signIn.authenticationContexts = AuthenticationContextClassReference.sorted(contexts)
        signIn.dpop = reader.bool("dpop") ?? false
        signIn.device = reader.object("device").flatMap(DeviceFacts.read(info:))
        signIn.readRisk(reader)
        signIn.clientCredential = reader.enumeration("clientCredentialType", allowed: ClientCredentialType.allCases.map(\.rawValue)).flatMap(
            ClientCredentialType.init(rawValue:))
        return signIn
    }

    /// The facts the token endpoint would have gathered, described instead; `nil` with problems at `pointer`'s members.
    func facts(
        tenant directory: DirectorySnapshot, at pointer: String, now: Date, problems: ProblemCollector, kept: (ObjectID) -> RiskyUser? = { _ in nil }
    ) -> GrantFacts? {
        func path(_ member: String) -> String { JSONPointer.appending(pointer, member) }
        var user: User?
        if let userId {
            user = directory.user(identity: userId)
            if user == nil { problems.add(path("userId"), "'\(userId)' names no user of this tenant.") }
        }
        let client = directory.application(appId: AppID(clientAppId))
        if client == nil { problems.add(path("clientAppId"), "'\(clientAppId)' names no application of this tenant.") }
        let resource = directory.resource(identifier: resourceAppId) ?? directory.application(appId: AppID(resourceAppId))
        if resource == nil { problems.add(path("resourceAppId"), "'\(resourceAppId)' names no resource of this tenant.") }
        var platform: DevicePlatform?
        if let name = self.platform {
            platform = DevicePlatform(caseInsensitive: name)
            if platform == nil {
                problems.add(path("platform"), "'\(name)' is not one of: \(DevicePlatform.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
        }
        var ip: IPAddress?
        if let text = ipAddress {
            ip = IPAddress(text)
            if ip == nil { problems.add(path("ipAddress"), "'\(text)' is not an IPv4 or IPv6 address.") }
        }
        if transferMethod != nil && userId == nil {
            problems.add(path("transferMethod"), "describes a user's sign-in: name the user (userId).")
        }
        if !authenticationContexts.isEmpty && userId == nil {
            problems.add(path("authenticationContexts"), "describes a user's sign-in: name the user (userId).")
        }
        if let clientCredential, let client, (clientCredential == .none) != client.publicClient {
            problems.add(
                path("clientCredentialType"),
                client.publicClient ? "a public client authenticates with nothing: none." : "a confidential client authenticates: not none.")
        }
        guard let client, let resource, userId == nil || user != nil, self.platform == nil || platform != nil, ipAddress == nil || ip != nil,
            transferMethod == nil || userId != nil, authenticationContexts.isEmpty || userId != nil
        else { return nil }
        let capabilities = ClaimsRequest(capabilities: capabilities, authenticationContexts: authenticationContexts)
        let authentication = user == nil ? AuthenticationContext.none : AuthenticationContext(methods: mfa ? ["pwd", "mfa"] : ["pwd"], time: now)
        var input = SignInFacts.Input(
            user: user, client: client, resource: resource, authentication: authentication, platform: platform, ipAddress: ip, capabilities: capabilities)
        input.appProtection = appProtection
        input.approvedClientApp = approvedClientApp
        input.clientAppType = clientAppType
        input.transferMethod = transferMethod
        input.proofOfPossession = dpop
        if device != nil && user == nil { problems.add(path("device"), "describes a user's sign-in: name the user (userId).") }
        input.device = user == nil ? nil : device
        let risky = user.flatMap { kept($0.id) }
        input.risk = RiskFacts(
            signIn: user == nil ? .none : signInRiskLevel ?? .none, user: user == nil ? .none : userRiskLevel ?? risky?.riskLevel ?? .none,
            userRiskUpdated: userRiskLevel == nil ? risky?.riskLastUpdatedDateTime : nil,
            insider: user == nil ? nil : insiderRiskLevel ?? risky?.insiderRiskLevel, servicePrincipal: user == nil ? servicePrincipalRiskLevel ?? .none : .none
        )
        let signIn = SignInFacts(input, directory: directory)
        var facts = GrantFacts(
            grantType: user == nil ? .clientCredentials : (transferMethod == .deviceCodeFlow ? .deviceCode : .password), tenant: directory, client: client,
            clientAuthenticated: !client.publicClient,
            user: user, scope: ScopeRequest(resource: resource, audience: resource.primaryIdentifier, resourceScopes: [], isDefault: true, oidc: []),
            scopeText: "\(resource.primaryIdentifier)/.default", capabilities: capabilities,
            signIn: signIn, authentication: authentication, clientInfoRequested: false, now: now)
        facts.proofThumbprint = dpop ? "what-if" : nil
        facts.clientCredential = clientCredential ?? (client.publicClient ? .none : .clientSecret)
        return facts
    }
}
