import Foundation
import PortcullisCore
import Testing

/// Terms of use in Core (PROTOCOL §17): durations, which acceptance counts, which file a user sees, the control.
@Suite("agreements (terms of use) in Core")
struct AgreementTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func agreement(frequency: String? = nil, expiration: Agreement.TermsExpiration? = nil) -> Agreement {
        Agreement(
            id: "a0000000-0000-4000-8000-0000000000a1", displayName: "Terms",
            files: [
                AgreementFile(id: "f1", fileName: "en.txt", language: "en-US", isDefault: true, data: Data("Terms".utf8)),
                AgreementFile(id: "f2", fileName: "fr.txt", language: "fr", isDefault: false, data: Data("Conditions".utf8)),
            ], userReacceptRequiredFrequency: frequency, termsExpiration: expiration)
    }

    @Test("ISO 8601 durations as Graph writes them")
    func durations() {
        #expect(ISODuration.seconds("P90D") == TimeInterval(90 * 86_400))
        #expect(ISODuration.seconds("P1Y") == TimeInterval(365 * 86_400))
        #expect(ISODuration.seconds("PT12H") == TimeInterval(12 * 3_600))
        #expect(ISODuration.seconds("P2W") == TimeInterval(14 * 86_400))
        #expect(ISODuration.seconds("P1DT1H30M") == TimeInterval(86_400 + 5_400))
        for bad in ["", "P", "90D", "PT", "P1H", "PXD", "P1D2"] { #expect(ISODuration.seconds(bad) == nil, "\(bad)") }
    }

    @Test("an acceptance counts until the frequency has passed and never across a terms-expiration boundary; a decline never counts")
    func currency() throws {
        let user = User(id: "u1", userPrincipalName: "u1@x.test", displayName: "U")
        let daily = Self.agreement(frequency: "P1D")
        let acceptance = AgreementAcceptance(agreement: daily, file: daily.files[0], user: user, state: .accepted, at: Self.start)
        #expect(daily.isCurrent(acceptance, at: Self.start.addingTimeInterval(86_399)))
        #expect(!daily.isCurrent(acceptance, at: Self.start.addingTimeInterval(86_400)))
        let once = Self.agreement()
        let forever = AgreementAcceptance(agreement: once, file: once.files[0], user: user, state: .accepted, at: Self.start)
        #expect(forever.expirationDateTime == nil && once.isCurrent(forever, at: Self.start.addingTimeInterval(10 * 365 * 86_400)))
        let declined = AgreementAcceptance(agreement: once, file: once.files[0], user: user, state: .declined, at: Self.start)
        #expect(!once.isCurrent(declined, at: Self.start))
        // Every acceptance ends on the first of each 30 days from the start.
        let expiring = Self.agreement(expiration: Agreement.TermsExpiration(startDateTime: Self.start.addingTimeInterval(10), frequency: "P30D"))
        let before = AgreementAcceptance(agreement: expiring, file: expiring.files[0], user: user, state: .accepted, at: Self.start)
        #expect(expiring.isCurrent(before, at: Self.start.addingTimeInterval(5)))
        #expect(!expiring.isCurrent(before, at: Self.start.addingTimeInterval(11)))
        let after = AgreementAcceptance(agreement: expiring, file: expiring.files[0], user: user, state: .accepted, at: Self.start.addingTimeInterval(20))
        #expect(expiring.isCurrent(after, at: Self.start.addingTimeInterval(30 * 86_400)))
        #expect(!expiring.isCurrent(after, at: Self.start.addingTimeInterval(30 * 86_400 + 11)))
        // Stored and read back as Graph writes dates.
        let data = try TenantDocuments.encoder.encode(acceptance)
        #expect(String(decoding: data, as: UTF8.self).contains("\"recordedDateTime\":\"20"))
        #expect(try TenantDocuments.decoder.decode(AgreementAcceptance.self, from: data) == acceptance)
    }

    @Test("the file in the user's language: the whole tag, then its primary subtag, else the default")
    func language() {
        let agreement = Self.agreement()
        #expect(agreement.file(for: ["fr-CA"])?.id == "f2")
        #expect(agreement.file(for: ["en-US"])?.id == "f1")
        #expect(agreement.file(for: ["de", "fr"])?.id == "f2")
        #expect(agreement.file(for: ["ja"])?.id == "f1")
        #expect(agreement.file(for: [])?.id == "f1")
        #expect(AgreementFile.format(of: Data("%PDF-1.7".utf8)) == .pdf)
        #expect(AgreementFile.format(of: Data([0xFF, 0xFE, 0x00])) == nil)
        #expect(AgreementFile.format(of: Data("a\u{0}b".utf8)) == nil)
    }

    @Test("the control: met only with every named agreement accepted; with OR, another control may stand in; what-if says why")
    func control() throws {
        let agreement = Self.agreement()
        func policy(_ op: String, controls: [String]) -> JSONValue {
            CA.json([
                "id": CA.id(1), "displayName": "ToU", "state": "enabled",
                "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]]],
                "grantControls": ["operator": op, "builtInControls": controls, "termsOfUse": [agreement.id.rawValue.uppercased()]],
            ])
        }
        let parsed = try ConditionalAccessPolicy.parse(policy("AND", controls: []), directory: CA.directory, agreements: [agreement], generatedId: "x")
        #expect(parsed.grantControls.termsOfUse == [agreement.id])
        let set = CompiledPolicySet(policies: [parsed], namedLocations: [])
        #expect(set.termsOfUseAgreements == [agreement.id])
        var facts = CA.facts()
        let refused = set.evaluate(facts, explain: true)
        #expect(refused.refusal == .termsOfUse(policyIds: [CA.id(1)]))
        #expect(refused.policies.first?.grantControlResults?.first?.reason.contains("has not accepted") == true)
        facts.acceptedAgreements = [agreement.id]
        #expect(set.evaluate(facts).refusal == nil)
        // OR with mfa: a second factor stands in for the terms (as Entra's "require one of the selected controls").
        let either = CompiledPolicySet(
            policies: [try ConditionalAccessPolicy.parse(policy("OR", controls: ["mfa"]), directory: CA.directory, agreements: [agreement], generatedId: "x")],
            namedLocations: [])
        #expect(either.evaluate(CA.facts(mfa: true)).refusal == nil)
        // Unknown agreements are refused at their pointer; offline (agreements unknown) any GUID is read.
        #expect(throws: ValidationError.self) { try ConditionalAccessPolicy.parse(policy("AND", controls: []), directory: CA.directory, generatedId: "x") }
        #expect(try ConditionalAccessPolicy.parse(policy("AND", controls: []), directory: CA.directory, agreements: nil, generatedId: "x").state == .enabled)
        // A decision with the terms to accept: the page's step, or interaction_required without a page.
        let step = InteractiveDecision.decide(
            InteractiveDecision.Facts(flow: .authorize, signIn: CA.facts(), now: Self.start, methods: .init(hasAuthenticatorApp: false, passkeys: 0)),
            policies: set)
        #expect(step.step == .acceptTerms(agreementIds: [agreement.id]))
        let silent = InteractiveDecision.decide(
            InteractiveDecision.Facts(
                flow: .authorize, signIn: CA.facts(), now: Self.start, silent: true, methods: .init(hasAuthenticatorApp: false, passkeys: 0)),
            policies: set)
        #expect(silent.step == .interactionRequired)
    }
}
