import Foundation
import PortcullisCore
import Testing

@Suite("Critical events and shared signals (PROTOCOL §14)")
struct CriticalEventTests {
    let at = Date(timeIntervalSince1970: 1_800_000_000.7)

    func event(_ kind: CriticalEvent.Kind) -> CriticalEvent {
        CriticalEvent(kind, tenantId: "T", userId: "U", userPrincipalName: "erin@contoso.example", at: at)
    }

    @Test(
        "each kind's SETs; those that end access add session-revoked",
        arguments: [
            (CriticalEvent.Kind.accountDisabled, [SharedSignalsEventType.accountDisabled, .sessionRevoked]),
            (.accountEnabled, [.accountEnabled]), (.accountDeleted, [.accountPurged, .sessionRevoked]),
            (.passwordChanged, [.credentialChange, .sessionRevoked]), (.sessionsRevoked, [.sessionRevoked]),
            (.credentialCompromised, [.credentialCompromise, .sessionRevoked]), (.methodAdded(.fido2), [.credentialChange]),
            (.methodRemoved(.app), [.credentialChange, .sessionRevoked]), (.assuranceLevelChanged(from: .aal3, to: .aal2), [.assuranceLevelChange]),
            (.enrollmentWiped(clientAppId: "C", enrollmentId: "E"), [.sessionRevoked]),
            (.complianceChanged(clientAppId: "C", enrollmentId: "E", compliant: false), [.deviceComplianceChange, .sessionRevoked]),
            (.complianceChanged(clientAppId: "C", enrollmentId: "E", compliant: true), [.deviceComplianceChange]),
            (.claimsChanged(["upn": "x"]), [.tokenClaimsChange]),
            (.conditionalAccessRefuses(clientAppId: "C", policyIds: ["P"]), [.sessionRevoked]),
        ])
    func signals(kind: CriticalEvent.Kind, expected: [SharedSignalsEventType]) {
        let signals = event(kind).signals
        #expect(signals.map(\.type) == expected)
        // To the millisecond (PROTOCOL §14.1).
        #expect(signals.allSatisfy { $0.members["event_timestamp"] == .number(1_800_000_000.7) && $0.members["initiating_entity"] == "admin" })
        #expect(event(kind).endsAccess == expected.contains(.sessionRevoked))
    }

    @Test("members: credential-change types, assurance direction, compliance statuses")
    func members() {
        #expect(event(.methodRemoved(.fido2)).signals[0].members["change_type"] == "delete")
        #expect(event(.methodRemoved(.fido2)).signals[0].members["credential_type"] == "fido2-roaming")
        #expect(event(.passwordChanged).signals[0].members["change_type"] == "update")
        let assurance = event(.assuranceLevelChanged(from: .aal2, to: .aal3)).signals[0].members
        #expect(assurance["change_direction"] == "increase" && assurance["namespace"] == "NIST-AAL" && assurance["current_level"] == "nist-aal3")
        let lost = event(.complianceChanged(clientAppId: "C", enrollmentId: "E", compliant: false)).signals[0].members
        #expect(lost["previous_status"] == "compliant" && lost["current_status"] == "not-compliant")
        #expect(CriticalEvent.AssuranceLevel.reached(hasPasskey: false, hasSecondFactor: true) == .aal2)
    }

    @Test("subjects: complex with user and tenant; app-scoped events add the application and the enrollment")
    func subjects() {
        let user = SignalSubject.issuerSubject(issuer: "https://i/t/v2.0", subject: "u")
        #expect(event(.accountDisabled).subject(issuer: "https://i/t/v2.0") == .complex(user: user, tenant: .opaque("t"), application: nil, device: nil))
        #expect(
            event(.enrollmentWiped(clientAppId: "C", enrollmentId: "E")).subject(issuer: "https://i/t/v2.0")
                == .complex(user: user, tenant: .opaque("t"), application: .opaque("c"), device: .opaque("e")))
        #expect(event(.enrollmentWiped(clientAppId: "C", enrollmentId: "E")).revokedApplication == "c")
        #expect(event(.accountDisabled).revokedApplication == nil)
    }

    @Test("a removed subject covers the events it names, and only those")
    func covers() {
        let subject = event(.accountDisabled).subject(issuer: "https://i/t/v2.0")
        #expect(SignalSubject.email("erin@contoso.example").covers(subject, userPrincipalName: "Erin@contoso.example"))
        #expect(SignalSubject.issuerSubject(issuer: "https://i/t/v2.0", subject: "u").covers(subject, userPrincipalName: nil))
        #expect(SignalSubject.opaque("u").covers(subject, userPrincipalName: nil))
        #expect(!SignalSubject.opaque("v").covers(subject, userPrincipalName: nil))
        #expect(!SignalSubject.email("bob@contoso.example").covers(subject, userPrincipalName: "erin@contoso.example"))
        #expect(
            SignalSubject.complex(user: nil, tenant: nil, application: .opaque("c"), device: nil).covers(
                event(.enrollmentWiped(clientAppId: "C", enrollmentId: "E")).subject(issuer: "i"), userPrincipalName: nil))
        #expect(!SignalSubject.complex(user: nil, tenant: nil, application: .opaque("c"), device: nil).covers(subject, userPrincipalName: nil))
    }

    @Test("subject identifiers are parsed with pointers")
    func parse() {
        let problems = ProblemCollector()
        #expect(SignalSubject.parse(["format": "email", "email": "A@B"], at: "/subject", problems: problems) == .email("a@b"))
        #expect(SignalSubject.parse(["format": "complex", "user": ["format": "complex", "id": "x"]], at: "/subject", problems: problems) == nil)
        #expect(problems.problems.contains { $0.pointer == "/subject/user/format" })
        let empty = ProblemCollector()
        #expect(SignalSubject.parse(["format": "complex"], at: "/s", problems: empty) == nil && empty.problems.first?.pointer == "/s")
    }

    @Test("stream requests: push needs an endpoint, poll takes none, headers are one line, pointers name the problem")
    func streamRequests() throws {
        let push = try SharedSignalsStream.parseRequest([
            "events_requested": .array(["https://schemas.openid.net/secevent/caep/event-type/session-revoked", "urn:unknown"]),
            "delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": "https://r.example/e", "authorization_header": "Bearer x"],
        ])
        #expect(push.method == .push && push.endpointUrl == "https://r.example/e" && push.authorizationHeader == "Bearer x")
        let stream = SharedSignalsStream(
            id: "S", receiverAppId: "R", audience: "R", eventsRequested: push.eventsRequested ?? [], delivery: .init(method: .push), createdAt: at)
        #expect(stream.eventsDelivered == [.sessionRevoked])
        #expect(stream.wants(.sessionRevoked, subject: .opaque("u"), userPrincipalName: nil))
        #expect(!stream.wants(.accountDisabled, subject: .opaque("u"), userPrincipalName: nil))
        var disabled = stream
        disabled.status = .disabled
        #expect(!disabled.wants(.sessionRevoked, subject: .opaque("u"), userPrincipalName: nil))
        for (body, pointer) in [
            (["delivery": ["method": "urn:ietf:rfc:8935"]] as JSONValue, "/delivery/endpoint_url"),
            (["delivery": ["method": "urn:ietf:rfc:8936", "endpoint_url": "https://x"]], "/delivery/endpoint_url"),
            (["delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": "ftp://x"]], "/delivery/endpoint_url"),
            (["delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": "https://x", "authorization_header": "a\r\nb"]], "/delivery/authorization_header"),
            (["nope": .bool(true)], "/nope"),
        ] {
            #expect(throws: ValidationError.self) { try SharedSignalsStream.parseRequest(body) }
            do { _ = try SharedSignalsStream.parseRequest(body) } catch { #expect(error.problems.contains { $0.pointer == pointer }) }
        }
    }
}

@Suite("Which changes raise which critical events (PROTOCOL §14.1)")
struct CriticalEventChangeTests {
    let at = Date(timeIntervalSince1970: 1_800_000_000)
    let erin = User(id: "U", userPrincipalName: "erin@contoso.example", displayName: "Erin", passwordHash: "h1")

    func kinds(_ events: [CriticalEvent]) -> [CriticalEvent.Kind] { events.map(\.kind) }

    @Test("user changes: disabled, enabled, deleted, a new password, changed claims; nothing for no change or a create")
    func users() {
        var disabled = erin
        disabled.accountEnabled = false
        #expect(kinds(CriticalEvent.userChanged(before: erin, after: disabled, tenantId: "T", at: at)) == [.accountDisabled])
        #expect(kinds(CriticalEvent.userChanged(before: disabled, after: erin, tenantId: "T", at: at)) == [.accountEnabled])
        #expect(kinds(CriticalEvent.userChanged(before: erin, after: nil, tenantId: "T", at: at)) == [.accountDeleted])
        #expect(CriticalEvent.userChanged(before: nil, after: erin, tenantId: "T", at: at).isEmpty)
        #expect(CriticalEvent.userChanged(before: erin, after: erin, tenantId: "T", at: at).isEmpty)
        var changed = erin
        changed.passwordHash = "h2"
        changed.displayName = "Erin E."
        changed.userPrincipalName = "erin.e@contoso.example"
        #expect(
            kinds(CriticalEvent.userChanged(before: erin, after: changed, tenantId: "T", at: at)) == [
                .passwordChanged, .claimsChanged(["upn": "erin.e@contoso.example", "name": "Erin E."]),
            ])
        let event = CriticalEvent.userChanged(before: erin, after: nil, tenantId: "T", at: at)[0]
        #expect(event.userId == "u" && event.tenantId == "t" && event.userPrincipalName == "erin@contoso.example" && event.at == at)
    }

    /// Its IDs as an app or admin may write them: the enrollment stores every one in normal form (its own ID included).
    func enrollment(_ status: ComplianceStatusValue) -> Enrollment {
        Enrollment(
            id: "E", tenantId: "T", userId: "U", userPrincipalName: "erin@contoso.example", clientId: "C", deviceId: "D", platform: nil,
            osVersion: nil, appVersion: nil, sdkVersion: nil, state: status == .compliant ? .compliant : .notCompliant,
            complianceStatus: ComplianceStatus(status: status), policyVersion: nil, appliedPolicyVersion: nil, callbackUri: nil, enrolledAt: at,
            lastCheckInAt: nil, lapsesAt: nil, updatedAt: at)
    }

    @Test("enrollment changes: a wipe; compliance lost or regained; nothing when compliance stays")
    func enrollments() {
        let compliant = enrollment(.compliant)
        let lost = enrollment(.notCompliant)
        #expect(
            kinds(CriticalEvent.enrollmentChanged(previous: compliant, current: lost, wiped: true, at: at)) == [
                .enrollmentWiped(clientAppId: "c", enrollmentId: "e")
            ])
        let dropped = CriticalEvent.enrollmentChanged(previous: compliant, current: lost, wiped: false, at: at)
        #expect(kinds(dropped) == [.complianceChanged(clientAppId: "c", enrollmentId: "e", compliant: false)] && dropped[0].endsAccess)
        #expect(
            kinds(CriticalEvent.enrollmentChanged(previous: lost, current: compliant, wiped: false, at: at)) == [
                .complianceChanged(clientAppId: "c", enrollmentId: "e", compliant: true)
            ])
        #expect(CriticalEvent.enrollmentChanged(previous: compliant, current: compliant, wiped: false, at: at).isEmpty)
        #expect(CriticalEvent.enrollmentChanged(previous: lost, current: enrollment(.serviceFailure), wiped: false, at: at).isEmpty)
    }

    @Test(
        "method changes: credential-change, and assurance-level-change when the reach moved",
        arguments: [
            // type, added, passkeys after, app after, expected assurance change
            (CriticalEvent.CredentialType.fido2, true, 1, false, CriticalEvent.Kind?.some(.assuranceLevelChanged(from: .aal1, to: .aal3))),
            (.fido2, true, 2, true, nil),  // a second passkey: still AAL3
            (.fido2, false, 0, true, .assuranceLevelChanged(from: .aal3, to: .aal2)),
            (.fido2, false, 1, false, nil),
            (.app, true, 0, true, .assuranceLevelChanged(from: .aal1, to: .aal2)),
            (.app, false, 0, false, .assuranceLevelChanged(from: .aal2, to: .aal1)),
            (.app, false, 1, false, nil),  // a passkey remains: AAL3 before and after
        ])
    func methods(type: CriticalEvent.CredentialType, added: Bool, passkeys: Int, app: Bool, assurance: CriticalEvent.Kind?) {
        let events = CriticalEvent.methodChanged(
            type, added: added, tenantId: "T", user: erin, initiator: .user, at: at, passkeysAfter: passkeys, authenticatorAppAfter: app)
        #expect(kinds(events) == [added ? .methodAdded(type) : .methodRemoved(type)] + (assurance.map { [$0] } ?? []))
        #expect(events.allSatisfy { $0.initiator == .user })
    }

    @Test("what a resource server treats as the end of access")
    func endsAccess() {
        #expect(SharedSignalsEventType.endsAccess(type: SharedSignalsEventType.sessionRevoked.rawValue, members: [:]))
        #expect(SharedSignalsEventType.endsAccess(type: SharedSignalsEventType.accountDisabled.rawValue, members: [:]))
        #expect(!SharedSignalsEventType.endsAccess(type: SharedSignalsEventType.accountEnabled.rawValue, members: [:]))
        #expect(SharedSignalsEventType.endsAccess(type: SharedSignalsEventType.credentialChange.rawValue, members: ["change_type": "delete"]))
        #expect(!SharedSignalsEventType.endsAccess(type: SharedSignalsEventType.credentialChange.rawValue, members: ["change_type": "create"]))
        #expect(
            SharedSignalsEventType.endsAccess(type: SharedSignalsEventType.deviceComplianceChange.rawValue, members: ["current_status": "not-compliant"]))
        #expect(
            !SharedSignalsEventType.endsAccess(type: SharedSignalsEventType.deviceComplianceChange.rawValue, members: ["current_status": "compliant"]))
        #expect(!SharedSignalsEventType.endsAccess(type: "urn:example:other", members: [:]))
    }

    @Test("a stream's outbox target names it, and only a stream's does")
    func outboxTargets() {
        #expect(SharedSignalsStream.streamId(ofOutboxTarget: SharedSignalsStream.outboxTarget(streamId: "ABC")) == "abc")
        #expect(SharedSignalsStream.streamId(ofOutboxTarget: "https://app.example/callback") == nil)
    }

    // MARK: A conditional-access change

    static func signIn(
        _ n: Int, user: String? = CA.u1, client: String = CA.approvedClient, resource: String = CA.r1, ageMinutes: Double = 10,
        capabilities: [String] = [], status: Decision.Status = .notApplied, errorCode: Int? = nil, methods: [String] = ["pwd"]
    ) -> SignInRecord {
        var record = SignInRecord(
            id: "s\(n)", createdDateTime: Date(timeIntervalSince1970: 1_800_000_000 - ageMinutes * 60), correlationId: "c\(n)",
            tenantId: CA.directory.tenant.id, userId: user.map { ObjectID($0) }, userPrincipalName: user.map { "\($0)@ca.test" }, clientAppId: AppID(client),
            resourceAppId: AppID(resource), resource: nil, grantType: "password", clientAppType: "mobileAppsAndDesktopClients", capabilities: capabilities,
            ipAddress: "192.0.2.10", platform: "iOS", appProtection: "none", conditionalAccessStatus: status, appliedConditionalAccessPolicies: [],
            errorCode: errorCode)
        record.authenticationMethods = methods
        return record
    }

    static func changed(
        _ records: [SignInRecord], before: [JSONValue], after: [JSONValue], directory: DirectorySnapshot = CA.directory
    ) throws
        -> [CriticalEvent]
    {
        CriticalEvent.conditionalAccessChanged(
            signIns: records, directory: directory, before: try CA.compile(before), after: try CA.compile(after), tenantId: "T",
            accessTokenLifetime: 3600, continuousAccessTokenLifetime: 24 * 3600, at: Date(timeIntervalSince1970: 1_800_000_000))
    }

    @Test("a policy change ends the tokens it now refuses: one event per user and client app, with the policies, from the live sign-ins only")
    func conditionalAccessChange() throws {
        let blockGroupA = CA.policy(1, users: [], groups: [CA.gA], apps: [CA.r1], controls: ["block"])
        let records = [
            Self.signIn(1), Self.signIn(2),  // u1 twice at the same app: one event
            Self.signIn(3, client: CA.plainClient),  // u1 at another app: its own event
            Self.signIn(4, user: CA.u2),  // u2 is not in group A
            Self.signIn(5, resource: CA.r2),  // another resource: allowed
            Self.signIn(6, ageMinutes: 61),  // its one-hour token has expired
            Self.signIn(7, status: .failure, errorCode: 53003),  // refused already: no token
            Self.signIn(8, user: nil),  // a workload identity: no user to revoke
        ]
        let events = try Self.changed(records, before: [], after: [blockGroupA])
        #expect(events.map(\.userId.rawValue) == [CA.u1, CA.u1])
        #expect(
            events.map(\.kind) == [
                .conditionalAccessRefuses(clientAppId: AppID(CA.approvedClient), policyIds: [CA.id(1)]),
                .conditionalAccessRefuses(clientAppId: AppID(CA.plainClient), policyIds: [CA.id(1)]),
            ])
        #expect(events.allSatisfy { $0.endsAccess && $0.initiator == .policy && $0.reason?.contains(CA.id(1)) == true })
        #expect(events.map(\.revokedApplication?.rawValue) == [CA.approvedClient, CA.plainClient])
        let subject = events[0].subject(issuer: "https://issuer")
        #expect(subject.json["application"] == ["format": "opaque", "id": .string(CA.approvedClient)], "\(subject.json)")

        // Refused before the change already (by another policy): nothing new.
        #expect(try Self.changed(records, before: [CA.policy(2, controls: ["block"])], after: [CA.policy(2, controls: ["block"]), blockGroupA]).isEmpty)
        // What the user's sign-in met is replayed: an MFA policy ends the password-only token, not the one with MFA.
        let mfa = CA.policy(3, controls: ["mfa"])
        #expect(try Self.changed([Self.signIn(1, methods: ["pwd", "mfa"])], before: [], after: [mfa]).isEmpty)
        #expect(try Self.changed([Self.signIn(1)], before: [], after: [mfa]).count == 1)
        // Report-only refuses nothing.
        #expect(try Self.changed(records, before: [], after: [CA.policy(4, state: "enabledForReportingButNotEnforced", controls: ["block"])]).isEmpty)
    }

    @Test("a cp1 token at a CAE resource lives a day; elsewhere an hour")
    func continuousLifetimes() throws {
        var directory = CA.directory
        directory = DirectorySnapshot(
            tenant: directory.tenant, revision: 2, users: directory.users, groups: directory.groups,
            applications: directory.applications.map { application in
                var application = application
                if application.appId.rawValue == CA.r1 { application.continuousAccessEvaluation = true }
                return application
            }, appRoleAssignments: [], namedLocations: directory.namedLocations)
        let old = [
            Self.signIn(1, ageMinutes: 600, capabilities: ["cp1"]),  // ten hours: a day-long cp1 token at the CAE resource
            Self.signIn(2, client: CA.plainClient, ageMinutes: 600),  // ten hours without cp1: expired
            Self.signIn(3, resource: CA.r2, ageMinutes: 600, capabilities: ["cp1"]),  // cp1 at a resource without CAE: expired
        ]
        let events = try Self.changed(old, before: [], after: [CA.policy(1, controls: ["block"])], directory: directory)
        #expect(events.map(\.kind) == [.conditionalAccessRefuses(clientAppId: AppID(CA.approvedClient), policyIds: [CA.id(1)])])
    }
}
