import Foundation
import PortcullisCore
import Testing

@Suite("Shared Signals received (PROTOCOL §19): transmitters, SETs' claims, what each event does")
struct ReceivedSignalsTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let alice = AdministeredDocumentTests.alice
    static let deviceObject: ObjectID = "d0c00000-0000-4000-8000-0000000000d1"
    static let deviceId: DeviceID = "d0c00000-0000-4000-8000-0000000000d2"
    static let transmitterId: PolicyID = "d0c00000-0000-4000-8000-0000000000f1"

    static func tenant() -> TenantSnapshot {
        AdministeredDocumentTests.tenant { contents in
            contents.devices = [Device(id: deviceObject, deviceId: deviceId, displayName: "Alice's laptop", trustType: .azureAd)]
        }
    }

    static func transmitter(_ edit: (inout SharedSignalsTransmitter) -> Void = { _ in }) -> SharedSignalsTransmitter {
        var made = SharedSignalsTransmitter(
            id: transmitterId, displayName: "Intel", issuer: "https://tx.test/", audience: "https://rx.test", jwksUri: "https://tx.test/jwks", at: now)
        edit(&made)
        return made
    }

    static func claims(_ edit: (inout [String: JSONValue]) -> Void = { _ in }) -> JSONValue {
        var object: [String: JSONValue] = [
            "iss": "https://tx.test/", "aud": "https://rx.test", "iat": .number(now.timeIntervalSince1970 - 10), "jti": "j-1",
            "sub_id": ["format": "email", "email": "ALICE@docs.test"],
            "events": [ReceivedEventType.sessionRevoked.rawValue: ["event_timestamp": .number(now.timeIntervalSince1970)]],
        ]
        edit(&object)
        return .object(object)
    }

    static func refusal(_ claims: JSONValue, _ transmitter: SharedSignalsTransmitter = transmitter()) -> SharedSignalsRefusal.Code? {
        do {
            _ = try transmitter.check(claims, now: now)
            return nil
        } catch {
            return error.code
        }
    }

    static func effects(_ claims: JSONValue, _ transmitter: SharedSignalsTransmitter = transmitter()) throws -> [ReceivedSignalEffect] {
        transmitter.effects(of: try transmitter.check(claims, now: now), in: tenant())
    }

    @Test("a SET's claims: iss, aud (a string or one of several), the iat window, a jti, bounded events — each refusal its RFC 8935 code")
    func claimsChecked() throws {
        #expect(Self.refusal(Self.claims()) == nil)
        #expect(Self.refusal(Self.claims { $0["aud"] = ["https://other.test", "https://rx.test"] }) == nil)
        #expect(Self.refusal(Self.claims { $0["iss"] = "https://impostor.test/" }) == .invalidIssuer)
        #expect(Self.refusal(Self.claims { $0["aud"] = "https://other.test" }) == .invalidAudience)
        #expect(Self.refusal(Self.claims { $0["aud"] = nil }) == .invalidAudience)
        #expect(Self.refusal(Self.claims { $0["iat"] = .number(Self.now.timeIntervalSince1970 - 86_401) }) == .invalidRequest)
        #expect(Self.refusal(Self.claims { $0["iat"] = .number(Self.now.timeIntervalSince1970 - 86_000) }) == nil)
        #expect(Self.refusal(Self.claims { $0["iat"] = .number(Self.now.timeIntervalSince1970 + 301) }) == .invalidRequest)
        #expect(Self.refusal(Self.claims { $0["iat"] = .number(Self.now.timeIntervalSince1970 + 299) }) == nil)
        #expect(Self.refusal(Self.claims { $0["iat"] = nil }) == .invalidRequest)
        #expect(Self.refusal(Self.claims { $0["jti"] = nil }) == .invalidRequest)
        #expect(Self.refusal(Self.claims { $0["jti"] = .string(String(repeating: "j", count: 257)) }) == .invalidRequest)
        #expect(Self.refusal(Self.claims { $0["events"] = [:] }) == .invalidRequest)
        let many = Dictionary(uniqueKeysWithValues: (0..<9).map { ("https://example.test/event/\($0)", JSONValue.object([:])) })
        #expect(Self.refusal(Self.claims { $0["events"] = .object(many) }) == .invalidRequest)
    }

    @Test("a SET's header: typ secevent+jwt, an asymmetric alg (never none or a shared secret), a string kid")
    func headerChecked() throws {
        #expect(try SharedSignalsTransmitter.checkHeader(["typ": "secevent+jwt", "alg": "ES256", "kid": "k1"]) == "k1")
        #expect(try SharedSignalsTransmitter.checkHeader(["typ": "application/secevent+jwt", "alg": "RS256"]) == nil)
        let refused: [(JSONValue, SharedSignalsRefusal.Code)] = [
            (["typ": "JWT", "alg": "ES256"], .invalidRequest), (["alg": "ES256"], .invalidRequest),
            (["typ": "secevent+jwt", "alg": "none"], .invalidKey), (["typ": "secevent+jwt", "alg": "HS256"], .invalidKey),
            (["typ": "secevent+jwt", "alg": "ES256", "kid": 7], .invalidRequest),
        ]
        for (header, code) in refused {
            do {
                _ = try SharedSignalsTransmitter.checkHeader(header)
                Issue.record("\(header) was accepted")
            } catch {
                #expect(error.code == code)
            }
        }
    }

    @Test("each event's default effect on the user its subject names, and what an admin's action changes")
    func effectsOfEvents() throws {
        func event(
            _ type: ReceivedEventType, _ members: JSONValue = [:], subject: JSONValue = ["format": "email", "email": "alice@docs.test"]
        )
            -> JSONValue
        {
            Self.claims {
                $0["events"] = .object([type.rawValue: members])
                $0["sub_id"] = subject
            }
        }
        let alice = Self.alice
        #expect(try Self.effects(event(.sessionRevoked)) == [.revokeSessions(alice)])
        #expect(try Self.effects(event(.credentialChange, ["change_type": "update"])) == [.revokeSessions(alice)])
        #expect(try Self.effects(event(.credentialChange, ["change_type": "create"])).first.map { if case .nothing = $0 { true } else { false } } == true)
        #expect(
            try Self.effects(event(.credentialCompromise)) == [
                .userRisk(alice, .leakedCredentials, .high, info: "reported by the transmitter Intel (credential-compromise)")
            ])
        #expect(
            try Self.effects(event(.riskLevelChange, ["current_level": "MEDIUM", "principal": "USER"])) == [
                .userRisk(alice, .investigationsThreatIntelligence, .medium, info: "reported by the transmitter Intel (risk-level-change)")
            ])
        if case .nothing = try Self.effects(event(.riskLevelChange, ["current_level": "MEDIUM", "principal": "DEVICE"]))[0] {
        } else {
            Issue.record("a device's risk is not the user's")
        }
        if case .nothing = try Self.effects(event(.riskLevelChange, ["current_level": "SEVERE"]))[0] {} else { Issue.record("an unknown level") }
        #expect(try Self.effects(event(.accountDisabled)) == [.disableAccount(alice)])
        #expect(
            try Self.effects(event(.accountCredentialChangeRequired)) == [
                .userRisk(alice, .investigationsThreatIntelligence, .high, info: "reported by the transmitter Intel (account-credential-change-required)")
            ])
        // The admin's setting: ignored, or ending the sessions instead.
        let ignoring = Self.transmitter { $0.actions = ["account-disabled": .ignore, "credential-compromise": .revokeSessions] }
        if case .nothing = try Self.effects(event(.accountDisabled), ignoring)[0] {} else { Issue.record("ignored") }
        #expect(try Self.effects(event(.credentialCompromise), ignoring) == [.revokeSessions(alice)])
        #expect(!ignoring.eventsRequested.contains(.accountDisabled) && ignoring.eventsRequested.contains(.credentialCompromise))
        // A device's compliance: its device ID or object ID, in a complex subject.
        let device: JSONValue = ["format": "complex", "device": ["format": "opaque", "id": .string(Self.deviceId.rawValue.uppercased())]]
        #expect(
            try Self.effects(event(.deviceComplianceChange, ["current_status": "not-compliant"], subject: device)) == [
                .deviceCompliance(Self.deviceObject, compliant: false)
            ])
        let byObject: JSONValue = ["format": "opaque", "id": .string(Self.deviceObject.rawValue)]
        #expect(
            try Self.effects(event(.deviceComplianceChange, ["current_status": "compliant"], subject: byObject)) == [
                .deviceCompliance(Self.deviceObject, compliant: true)
            ])
        // An unknown event type: accepted, nothing done.
        let unknown = Self.claims { $0["events"] = ["https://example.test/other": [:]] }
        if case .nothing = try Self.effects(unknown)[0] {} else { Issue.record("unknown event") }
    }

    @Test("subjects in the transmitter's formats: email → UPN, iss_sub → object ID by default; other formats only where registered")
    func subjects() throws {
        func revoke(_ subject: JSONValue, _ transmitter: SharedSignalsTransmitter = Self.transmitter()) throws -> ReceivedSignalEffect {
            try Self.effects(Self.claims { $0["sub_id"] = subject }, transmitter)[0]
        }
        let alice = Self.alice
        #expect(try revoke(["format": "iss_sub", "iss": "https://tx.test/", "sub": .string(alice.rawValue.uppercased())]) == .revokeSessions(alice))
        #expect(try revoke(["format": "complex", "user": ["format": "email", "email": "alice@docs.test"]]) == .revokeSessions(alice))
        // Not registered: `opaque`; an email that is no UPN here; an object ID given as an email.
        for subject: JSONValue in [
            ["format": "opaque", "id": .string(alice.rawValue)], ["format": "email", "email": "mallory@docs.test"],
            ["format": "email", "email": .string(alice.rawValue)], ["format": "phone_number", "phone_number": "+1"],
        ] {
            if case .nothing = try revoke(subject) {} else { Issue.record("\(subject) should name nobody") }
        }
        let opaque = Self.transmitter { $0.subjectFormats = ["opaque": .userPrincipalName] }
        #expect(try revoke(["format": "opaque", "id": "alice@docs.test"], opaque) == .revokeSessions(alice))
        if case .nothing = try revoke(["format": "email", "email": "alice@docs.test"], opaque) {} else { Issue.record("email not registered") }
    }

    @Test("a registration read: exactly one key source, https only, poll needs a configuration, actions and formats at their pointers, bounded")
    func registration() async throws {
        let write = AdministeredDocumentTests.write(Self.tenant())
        func problems(_ body: String) async -> [String] {
            do {
                _ = try await SharedSignalsTransmitter.read(AdministeredDocumentTests.json(body), in: write)
                return []
            } catch let error as ValidationError {
                return error.problems.map(\.pointer).sorted()
            } catch {
                return ["?"]
            }
        }
        let base = #""displayName": "Intel", "issuer": "https://tx.test/", "audience": "https://rx.test""#
        #expect(await problems(#"{\#(base), "jwksUri": "https://tx.test/jwks"}"#) == [])
        #expect(await problems(#"{\#(base)}"#) == [""])
        #expect(await problems(#"{\#(base), "jwksUri": "https://tx.test/jwks", "configurationUrl": "https://tx.test/c"}"#) == [""])
        #expect(await problems(#"{\#(base), "jwksUri": "http://tx.test/jwks"}"#) == ["/jwksUri"])
        #expect(await problems(#"{\#(base), "jwksUri": "https://tx.test/jwks", "delivery": "poll"}"#) == ["/delivery"])
        #expect(
            await problems(#"{\#(base), "jwksUri": "https://tx.test/jwks", "actions": {"session-revoked": "disableAccount", "x": "ignore"}}"#) == [
                "/actions/session-revoked", "/actions/x",
            ])
        #expect(await problems(#"{\#(base), "jwksUri": "https://tx.test/jwks", "subjectFormats": {}}"#) == ["/subjectFormats"])
        #expect(await problems(#"{\#(base), "jwksUri": "https://tx.test/jwks", "subjectFormats": {"email": "mail"}}"#) == ["/subjectFormats/email"])
        #expect(await problems(#"{"issuer": "https://tx.test/", "jwksUri": "https://tx.test/jwks", "secret": 1}"#).contains("/secret"))
        // The write-only values: hashed and sealed through the services, shown only as set.
        let made = try await SharedSignalsTransmitter.read(
            AdministeredDocumentTests.json(
                #"{\#(base), "configurationUrl": "https://tx.test/c", "delivery": "poll", "authorizationHeader": "Bearer in", "transmitterAuthorization": "Bearer out"}"#
            ), in: write)
        #expect(made.authorizationHeaderHash == "hashed:Bearer in")
        #expect(made.sealedTransmitterAuthorization == Data("sealed:ssf-transmitter:Bearer out".utf8))
        let shown = made.presented
        #expect(shown["authorizationHeaderSet"] == true && shown["transmitterAuthorizationSet"] == true)
        #expect(shown["authorizationHeaderHash"] == nil && shown["sealedTransmitterAuthorization"] == nil)
        // A replace without them keeps them, and keeps the stream while what it was made for is the same.
        var stored = made
        stored.stream = .init(
            streamId: "s1", pollEndpoint: "https://tx.test/poll", authorizationHeaderHash: nil, madeFor: made.streamPurpose, createdDateTime: Self.now)
        let withStored = AdministeredDocumentTests.write(AdministeredDocumentTests.tenant { $0.sharedSignalsTransmitters = [stored] })
        let again = #"{"id": "\#(made.id)", \#(base), "configurationUrl": "https://tx.test/c", "delivery": "poll"}"#
        let replaced = try await SharedSignalsTransmitter.read(AdministeredDocumentTests.json(again), in: withStored)
        #expect(replaced == stored)
        let moved = #"{"id": "\#(made.id)", \#(base), "configurationUrl": "https://tx.test/other", "delivery": "poll"}"#
        let remade = try await SharedSignalsTransmitter.read(AdministeredDocumentTests.json(moved), in: withStored)
        #expect(remade.stream == nil && remade.authorizationHeaderHash == "hashed:Bearer in")
        // At most 20 per tenant.
        let full = AdministeredDocumentTests.write(
            AdministeredDocumentTests.tenant { contents in
                contents.sharedSignalsTransmitters = (0..<20).map { index in
                    Self.transmitter { $0.id = PolicyID(String(format: "d0c00000-0000-4000-8000-%012d", index)) }
                }
            })
        await #expect(throws: ValidationError.self) {
            _ = try await SharedSignalsTransmitter.read(AdministeredDocumentTests.json(#"{\#(base), "jwksUri": "https://tx.test/jwks"}"#), in: full)
        }
    }
}
