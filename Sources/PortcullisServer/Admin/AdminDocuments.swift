import Foundation
import HTTPTypes
import Logging
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// Every kind of tenant document the admin API and the console edit. A kind's own rules — reading and validating a
/// body, how it is shown, what a delete must not break — are its `AdministeredDocument` conformance (Core, beside the
/// type); what a change ends and announces is its `TenantDocument.effects` (Core), committed with it by
/// `DocumentResource`. Here is only what follows a stored change outside the document (announcing configuration,
/// making an invitation's user), and the services the rules need (`AdminDocumentServices`).
struct AdminDocuments: Sendable {
    let conditionalAccessPolicies: DocumentResource<ConditionalAccessPolicy>
    let authenticationStrengths: DocumentResource<AuthenticationStrengthPolicy>
    let authenticationContexts: DocumentResource<AuthenticationContextClassReference>
    let attestationRoots: DocumentResource<FidoAttestationRoot>
    let namedLocations: DocumentResource<NamedLocation>
    let appProtectionPolicies: DocumentResource<AppProtectionPolicy>
    let appConfigurationPolicies: DocumentResource<AppConfigurationPolicy>
    let users: DocumentResource<User>
    let groups: DocumentResource<Group>
    let applications: DocumentResource<PortcullisCore.Application>
    let roleAssignments: DocumentResource<RoleAssignmentDocument>
    let directoryRoleAssignments: DocumentResource<DirectoryRoleAssignment>
    let tenant: DocumentResource<Tenant>
    /// Terms of use (PROTOCOL §17), and users' answers (written by the sign-in page, read through the agreement).
    let agreements: DocumentResource<Agreement>
    let agreementAcceptances: DocumentResource<AgreementAcceptance>
    /// B2B collaboration (PROTOCOL §17): invitations (each makes its B2B collaboration user through `users`) and trust in
    /// partner tenants.
    let invitations: DocumentResource<Invitation>
    let crossTenantAccessPartners: DocumentResource<CrossTenantAccessPartner>
    /// Devices (PROTOCOL §18): created by admins here, registered by users at `/{tenant}/devices/v1/register`.
    let devices: DocumentResource<Device>
    /// Device compliance policies (PROTOCOL §18): what a device's check-in is held to.
    let deviceCompliancePolicies: DocumentResource<DeviceCompliancePolicy>
    /// Shared Signals transmitters the tenant receives from (PROTOCOL §19).
    let sharedSignalsTransmitters: DocumentResource<SharedSignalsTransmitter>
    /// What the kinds' rules need of the server.
    let services: AdminDocumentServices
    /// Tells Shared Signals receivers about users' changes (PROTOCOL §14.1).
    let transmitter: SignalTransmitter
    let logger: Logger

    init(
        store: any PortcullisStore, tenants: TenantCache, clock: any WallClock, passwords: PasswordHasher, credentials: CredentialHasher,
        compliance: ComplianceService, transmitter: SignalTransmitter, authority: IssuingAuthority, logger: Logger
    ) {
        self.transmitter = transmitter
        self.logger = logger
        let services = AdminDocumentServices(
            store: store, tenants: tenants, clock: clock, passwords: passwords, credentials: credentials, authority: authority)
        self.services = services
        func resource<Document: AdministeredDocument>(
            _ registration: DocumentRegistration<Document> = DocumentRegistration()
        ) -> DocumentResource<Document> {
            DocumentResource(registration: registration, services: services, store: store, tenants: tenants, clock: clock, effects: transmitter)
        }
        conditionalAccessPolicies = resource()
        authenticationStrengths = resource()
        agreements = resource()
        agreementAcceptances = resource()
        authenticationContexts = resource()
        attestationRoots = resource()
        namedLocations = resource()
        appProtectionPolicies = resource()
        appConfigurationPolicies = resource(
            DocumentRegistration(afterWrite: { before, after, tenant, actor in
                if let policyId = (before ?? after)?.id {
                    try await AppSecretRoutes.removeUndeclared(
                        policyId: policyId, declared: after?.secrets ?? [], tenantId: tenant.tenant.id, actor: actor, at: clock.now(), store: store,
                        tenants: tenants)
                }
                // The apps whose instances may see another configuration now: those targeted before or after. Best effort:
                // the write is stored; an instance not told now gets `refreshConfiguration` at its next check-in.
                let apps = [before, after].compactMap { $0 }.flatMap(\.targets.applications)
                _ = try? await compliance.announceConfiguration(tenantId: tenant.tenant.id, clientIds: Set(apps))
            }))
        let users: DocumentResource<User> = resource()
        self.users = users
        invitations = resource(
            DocumentRegistration(afterWrite: { _, after, tenant, actor in
                // The B2B collaboration user, made through the users' own write path (validation, audit, effects) when
                // the tenant has none for that home account yet.
                guard let after, let current = try await tenants.snapshot(id: tenant.tenant.id), current.directory.user(id: after.invitedUser.id) == nil
                else { return }
                let made = try await Invitation.resolve(JSONValue(encoding: after), in: DocumentWrite(tenant: current, services: services)).user
                _ = try await users.save(made, before: nil, precondition: .mustNotExist, tenant: current, actor: actor)
            }))
        crossTenantAccessPartners = resource()
        devices = resource()
        sharedSignalsTransmitters = resource()
        deviceCompliancePolicies = resource()
        groups = resource(
            DocumentRegistration(afterWrite: { _, _, tenant, _ in
                // A membership change can move a member's app configuration: announce it (best effort, PROTOCOL §8.2).
                let apps = Set(tenant.appConfigurationPolicies.flatMap(\.targets.applications))
                if !apps.isEmpty { _ = try? await compliance.announceConfiguration(tenantId: tenant.tenant.id, clientIds: apps) }
            }))
        applications = resource()
        roleAssignments = resource()
        directoryRoleAssignments = resource()
        tenant = resource()
    }
}

/// The server's side of `DocumentServices`: bcrypt, the credential key, the store's registered methods, the tenants.
struct AdminDocumentServices: DocumentServices {
    let store: any PortcullisStore
    let tenants: TenantCache
    let clock: any WallClock
    let passwords: PasswordHasher
    let credentials: CredentialHasher
    let authority: IssuingAuthority

    var now: Date { clock.now() }

    func deviceCertificate(csr: String, tenant: Tenant, objectId: ObjectID, deviceId: DeviceID, current: Device.Certificate?) throws -> Device.Certificate {
        let request = try IssuingAuthority.verifiedDeviceRequest(csr)
        // The same key asked for again (a folder applied twice): the certificate it holds stays, and so does the device.
        if let current, IssuingAuthority.certificate(current, isFor: request) { return current }
        return try authority.issueDevice(request, tenant: tenant, objectId: objectId, deviceId: deviceId, now: clock.now())
    }

    func passwordHash(_ password: String, keeping stored: String?) async throws -> String {
        if let stored, try await passwords.verify(password, hash: stored) { return stored }
        return try await passwords.hash(password)
    }

    func secretHash(_ secret: String) -> String { credentials.hashSecret(secret) }

    func registeredMethods(tenantId: TenantID) async throws -> ConditionalAccessPolicy.RegisteredMethods {
        ConditionalAccessPolicy.RegisteredMethods(
            anyFactor: try await store.usersWithAuthenticationMethods(tenantId: tenantId), passkey: try await store.usersWithPasskeys(tenantId: tenantId))
    }

    func tenant(segment: String) async throws -> TenantSnapshot? { try await tenants.snapshot(tenantSegment: segment) }

    func keyCredential(_ text: String, displayName: String?) -> Result<KeyCredential, KeyCredentialProblem> {
        KeyCredential.reading(text, keyId: RecordID.generate(), displayName: displayName)
    }

    func seal(_ secret: String, tenantId: TenantID, purpose: String, id: String) throws -> Data {
        try FactorSecretBox(credentials: credentials).seal(Array(secret.utf8), tenantId: tenantId.rawValue, userId: purpose, methodId: id)
    }
}
