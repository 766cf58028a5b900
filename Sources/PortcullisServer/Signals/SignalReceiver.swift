import AsyncHTTPClient
import Crypto
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PortcullisCore
import PortcullisStorage
import PortcullisTokens
import ServiceLifecycle
import Synchronization

/// Receives Shared Signals (PROTOCOL §19): verifies a transmitter's SETs (its keys, `iss`, `aud`, the `iat` window, a
/// `jti` never seen by any node) and carries out what Core decides each event does through the write paths an admin's
/// change takes (sessions revoked, risk reported, a user disabled, a device's compliance), so a received event is as
/// durable as the admin's own. Push arrives at `SignalReceiverRoutes`; polls, and the streams made with transmitters
/// that publish a configuration, are this service's loop.
final class SignalReceiver: Service, Sendable {
    let tenants: TenantCache
    let store: any PortcullisStore
    let transmitters: DocumentResource<SharedSignalsTransmitter>
    let users: DocumentResource<User>
    let devices: DocumentResource<Device>
    let sessions: SignalAdminRoutes
    let risk: RiskEngine
    let credentials: CredentialHasher
    let endpoints: ServerEndpoints
    let fetcher: IssuerFetcher
    let keys: IssuerKeys
    let clock: any WallClock
    let interval: Duration
    let logger: Logger
    /// Per transmitter: SETs handled since the last poll (acknowledged or refused at the next), and when a stream was
    /// last tried (set-ups that fail back off).
    private let pending = Mutex<[PolicyID: Pending]>([:])

    struct Pending {
        var ack: [String] = []
        var errors: [String: JSONValue] = [:]
        var lastSetUp: Date?
        var failures = 0
    }

    init(
        tenants: TenantCache, store: any PortcullisStore, transmitters: DocumentResource<SharedSignalsTransmitter>, users: DocumentResource<User>,
        devices: DocumentResource<Device>, sessions: SignalAdminRoutes, risk: RiskEngine, credentials: CredentialHasher, endpoints: ServerEndpoints,
        settings: SignalSettings, destinations: CallbackDestinations, clock: any WallClock, logger: Logger
    ) {
        self.tenants = tenants
        self.store = store
        self.transmitters = transmitters
        self.users = users
        self.devices = devices
        self.sessions = sessions
        self.risk = risk
        self.credentials = credentials
        self.endpoints = endpoints
        self.fetcher = IssuerFetcher(destinations: destinations, logger: logger)
        self.keys = IssuerKeys(fetcher: fetcher)
        self.clock = clock
        self.interval = settings.receiverPollInterval
        self.logger = logger
    }

    // MARK: One SET

    enum Outcome: Equatable {
        case applied([ReceivedSignalEffect])
        /// Its `jti` was received before (by any node).
        case replayed
    }

    /// Verifies one SET from `transmitter` and carries out its events; a refusal is RFC 8935's `err`. Nothing is done for
    /// a SET refused, nor for one seen before.
    func receive(_ token: String, from transmitter: SharedSignalsTransmitter, tenant: TenantSnapshot) async throws(SharedSignalsRefusal) -> Outcome {
        guard token.utf8.count <= SharedSignalsTransmitter.maximumSETBytes else {
            throw SharedSignalsRefusal(.invalidRequest, "the SET is larger than \(SharedSignalsTransmitter.maximumSETBytes) bytes")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])), let header = JSONValue.parse(headerBytes) else {
            throw SharedSignalsRefusal(.invalidRequest, "the body is not a signed SET (a compact JWS)")
        }
        let kid = try SharedSignalsTransmitter.checkHeader(header)
        let collection: JWTKeyCollection
        do {
            collection = try await keys.keys(
                from: IssuerKeys.Source(
                    issuer: transmitter.issuer, jwksUri: transmitter.jwksUri, configurationUrl: transmitter.configurationUrl, what: "the transmitter"),
                kid: kid, now: clock.now())
        } catch {
            throw SharedSignalsRefusal(
                .invalidKey, error == .unavailable ? "the transmitter's keys could not be fetched" : "the SET's kid is not among the transmitter's keys")
        }
        let claims: JSONValue
        do {
            claims = try await collection.verify(token, as: UncheckedClaims.self).value
        } catch {
            throw SharedSignalsRefusal(.authenticationFailed, "the SET's signature does not verify with the transmitter's keys")
        }
        let now = clock.now()
        let set = try transmitter.check(claims, now: now)
        do {
            let key = "ssf-set:" + Base64URL.encode(Data(SHA256.hash(data: Data("\(tenant.tenant.id)|\(transmitter.id)|\(set.jti)".utf8))))
            let expires = set.issuedAt.addingTimeInterval(SharedSignalsTransmitter.maximumAge + SharedSignalsTransmitter.maximumSkew)
            guard try await store.claimProof(key: key, expiresAt: max(expires, now.addingTimeInterval(60)), now: now) else { return .replayed }
        } catch {
            throw SharedSignalsRefusal(.invalidRequest, "the SET could not be recorded now; send it again later")
        }
        let effects = transmitter.effects(of: set, in: tenant)
        for effect in effects {
            do {
                try await carryOut(effect, transmitter: transmitter, tenant: tenant)
            } catch {
                // Claimed, so not applied twice; said loudly, as a lost revocation matters.
                logger.error(
                    "a received shared signal could not be carried out", metadata: ["portcullis.jti": .string(set.jti), "portcullis.error": "\(error)"])
            }
        }
        logger.info(
            "shared signal received",
            metadata: [
                "portcullis.transmitter": .string(transmitter.id.rawValue), "portcullis.jti": .string(set.jti),
                "portcullis.effects": .string(effects.map { "\($0)" }.joined(separator: "; ")),
            ])
        return .applied(effects)
    }

    /// Who made a received change, in the audit log.
    func actor(_ transmitter: SharedSignalsTransmitter) -> String { "transmitter \(transmitter.displayName) (shared signals)" }

    func carryOut(_ effect: ReceivedSignalEffect, transmitter: SharedSignalsTransmitter, tenant: TenantSnapshot) async throws {
        let actor = actor(transmitter)
        switch effect {
        case .revokeSessions(let id):
            guard let user = tenant.directory.user(id: id) else { return }
            try await sessions.revokeSessions(tenant: tenant, user: user, actor: actor, compromised: false)
        case .userRisk(let id, let type, let level, let info):
            guard let user = tenant.directory.user(id: id) else { return }
            try await risk.report(type, user: user, in: tenant, actor: actor, level: level, additionalInfo: info)
        case .disableAccount(let id):
            try await edit(users, id: id.rawValue, tenant: tenant, actor: actor) { user in
                guard user.accountEnabled else { return false }
                user.accountEnabled = false
                return true
            }
        case .deviceCompliance(let id, let compliant):
            try await edit(devices, id: id.rawValue, tenant: tenant, actor: actor) { device in
                guard device.isCompliant != compliant else { return false }
                device.isCompliant = compliant
                device.complianceGracePeriodExpirationDateTime = nil
                return true
            }
        case .nothing:
            return
        }
    }

    /// A document changed through its kind's write path, on its version, retried when another node wrote it meanwhile.
    func edit<Document: AdministeredDocument>(
        _ resource: DocumentResource<Document>, id: String, tenant: TenantSnapshot, actor: String, _ apply: (inout Document) -> Bool
    ) async throws {
        for attempt in 1...5 {
            let current = try await tenants.snapshot(id: tenant.tenant.id) ?? tenant
            guard let found = try await resource.read(current, id: id) else { return }
            var document = found.document
            guard apply(&document) else { return }
            do {
                _ = try await resource.save(document, before: found, precondition: .version(found.version), tenant: current, actor: actor)
                return
            } catch let error as StorageError where error.code == .preconditionFailed && attempt < 5 {
                continue
            }
        }
    }

    // MARK: Streams and polls

    func run() async throws {
        await repeatUntilShutdown(every: interval) { await self.cycle() }
    }

    /// Every transmitter of every tenant: a stream made where one is due, SETs polled where the transmitter is polled.
    func cycle() async {
        guard let all = try? await tenants.snapshots() else { return }
        // What is kept per transmitter goes with the transmitter.
        let registered = Set(all.values.flatMap { $0.contents.sharedSignalsTransmitters.map(\.id) })
        pending.withLock { state in state = state.filter { registered.contains($0.key) } }
        for tenant in all.values {
            for transmitter in tenant.contents.sharedSignalsTransmitters {
                do {
                    var current = transmitter
                    if transmitter.configurationUrl != nil && transmitter.stream == nil {
                        guard let made = try await setUpStream(transmitter, tenant: tenant) else { continue }
                        current = made
                    }
                    if current.delivery == .poll, let endpoint = current.stream?.pollEndpoint {
                        try await poll(endpoint, transmitter: current, tenant: tenant)
                    }
                } catch {
                    logger.warning(
                        "a shared signals transmitter could not be reached",
                        metadata: ["portcullis.transmitter": .string(transmitter.id.rawValue), "portcullis.error": "\(error)"])
                }
            }
        }
    }

    /// The `Authorization` value this server sends the transmitter, opened.
    func outgoingAuthorization(_ transmitter: SharedSignalsTransmitter, tenant: TenantSnapshot) -> String? {
        guard let sealed = transmitter.sealedTransmitterAuthorization else { return nil }
        return FactorSecretBox(credentials: credentials).open(
            sealed, tenantId: tenant.tenant.id.rawValue, userId: SharedSignalsTransmitter.sealPurpose, methodId: transmitter.id.rawValue
        ).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Makes a stream at a transmitter that publishes its configuration (SSF §8.1.1), and records it in the
    /// transmitter's document; set-ups that fail back off (30 s, doubling, at most an hour). `nil`: not now.
    func setUpStream(_ transmitter: SharedSignalsTransmitter, tenant: TenantSnapshot) async throws -> SharedSignalsTransmitter? {
        let now = clock.now()
        let due = pending.withLock { state -> Bool in
            let entry = state[transmitter.id] ?? Pending()
            let wait = min(3600, 30 * Double(1 << min(entry.failures, 7)))
            guard entry.failures == 0 || entry.lastSetUp.map({ now.timeIntervalSince($0) >= wait }) ?? true else { return false }
            state[transmitter.id, default: Pending()].lastSetUp = now
            return true
        }
        guard due, let configurationUrl = transmitter.configurationUrl else { return nil }
        do {
            let configuration = try await fetcher.configuration(configurationUrl, issuer: transmitter.issuer, what: "the transmitter's configuration")
            guard let endpoint = configuration.configurationEndpoint else {
                throw IssuerFetcher.Failure("the transmitter's configuration has no configuration_endpoint")
            }
            var delivery: [String: JSONValue] = [
                "method": .string(transmitter.delivery == .push ? SharedSignalsEventType.pushDelivery : SharedSignalsEventType.pollDelivery)
            ]
            var pushHeader: String?
            if transmitter.delivery == .push {
                let header = "Bearer " + Base64URL.encode(Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }))
                pushHeader = header
                delivery["endpoint_url"] = .string("\(endpoints.baseURL)/\(tenant.tenant.id)/ssf/receiver/\(transmitter.id)")
                delivery["authorization_header"] = .string(header)
            }
            let body: JSONValue = .object([
                "delivery": .object(delivery), "events_requested": .array(transmitter.eventsRequested.map { .string($0.rawValue) }),
                "description": .string("Portcullis tenant \(tenant.tenant.id)"),
            ])
            let created = try await fetcher.json(
                endpoint, method: .POST, body: body, authorization: outgoingAuthorization(transmitter, tenant: tenant), what: "stream creation")
            guard let streamId = created["stream_id"]?.stringValue, streamId.utf8.count <= 256 else {
                throw IssuerFetcher.Failure("the transmitter's stream has no stream_id")
            }
            let audiences: [String] = created["aud"].map { $0.stringValue.map { [$0] } ?? ($0.arrayValue ?? []).compactMap(\.stringValue) } ?? []
            if !audiences.isEmpty && !audiences.contains(transmitter.audience) {
                throw IssuerFetcher.Failure("the transmitter's stream names another aud than the registered audience")
            }
            var pollEndpoint: String?
            if transmitter.delivery == .poll {
                guard let url = created["delivery"]?["endpoint_url"]?.stringValue, url.utf8.count <= 2048 else {
                    throw IssuerFetcher.Failure("the transmitter's poll stream has no endpoint_url")
                }
                pollEndpoint = url
            }
            guard let found = try await transmitters.read(tenant, id: transmitter.id.rawValue), found.document.stream == nil else { return nil }
            var document = found.document
            document.stream = SharedSignalsTransmitter.Stream(
                streamId: streamId, pollEndpoint: pollEndpoint, authorizationHeaderHash: pushHeader.map(credentials.hashSecret),
                madeFor: document.streamPurpose, createdDateTime: clock.now())
            _ = try await transmitters.save(
                document, before: found, precondition: .version(found.version), tenant: tenant, actor: "system (shared signals receiver)")
            pending.withLock { $0[transmitter.id, default: Pending()].failures = 0 }
            logger.notice(
                "created a shared signals stream at a transmitter",
                metadata: ["portcullis.transmitter": .string(transmitter.id.rawValue), "portcullis.stream_id": .string(streamId)])
            return document
        } catch {
            pending.withLock { $0[transmitter.id, default: Pending()].failures += 1 }
            throw error
        }
    }

    /// Polls a transmitter (RFC 8936) until it has nothing more (at most ten rounds a cycle), acknowledging what was
    /// carried out and replayed SETs, and answering refused ones in `setErrs`.
    func poll(_ endpoint: String, transmitter: SharedSignalsTransmitter, tenant: TenantSnapshot) async throws {
        for _ in 0..<10 {
            let (ack, errors) = pending.withLock { state in
                let entry = state[transmitter.id] ?? Pending()
                state[transmitter.id]?.ack = []
                state[transmitter.id]?.errors = [:]
                return (entry.ack, entry.errors)
            }
            var body: [String: JSONValue] = ["maxEvents": 50, "returnImmediately": true, "ack": .array(ack.map(JSONValue.string))]
            if !errors.isEmpty { body["setErrs"] = .object(errors) }
            let answer: JSONValue
            do {
                answer = try await fetcher.json(
                    endpoint, method: .POST, body: .object(body), authorization: outgoingAuthorization(transmitter, tenant: tenant), what: "the poll")
            } catch {
                // Not told: acknowledged at the next poll.
                pending.withLock { state in
                    state[transmitter.id, default: Pending()].ack.append(contentsOf: ack)
                    state[transmitter.id, default: Pending()].errors.merge(errors) { $1 }
                }
                throw error
            }
            let sets = (answer["sets"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.prefix(50)
            var acknowledged: [String] = []
            var refused: [String: JSONValue] = [:]
            for (jti, value) in sets where jti.utf8.count <= 256 {
                guard let token = value.stringValue else {
                    refused[jti] = SharedSignalsRefusal(.invalidRequest, "not a SET").body
                    continue
                }
                do {
                    _ = try await receive(token, from: transmitter, tenant: tenant)
                    acknowledged.append(jti)
                } catch {
                    refused[jti] = error.body
                    logger.warning(
                        "a polled SET was refused",
                        metadata: ["portcullis.transmitter": .string(transmitter.id.rawValue), "portcullis.error": .string(error.description)])
                }
            }
            pending.withLock { state in
                state[transmitter.id, default: Pending()].ack.append(contentsOf: acknowledged)
                state[transmitter.id, default: Pending()].errors.merge(refused) { $1 }
            }
            // Nothing new: what was handled has been told. Else another round tells it (and takes what is more).
            if sets.isEmpty { return }
        }
    }
}
