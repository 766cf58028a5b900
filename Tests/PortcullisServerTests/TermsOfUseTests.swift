import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisTesting
import Testing

/// Terms of use (PROTOCOL §17): agreements through the admin API, the `termsOfUse` control, the page's Accept and
/// Decline, the recorded acceptances, and re-acceptance after the frequency.
@Suite("terms of use: agreements, the control, the page, acceptances")
struct TermsOfUseTests {
    static let english = "Contoso terms of use.\nUse the mail app for work only.\n"
    static let french = "Conditions d'utilisation de Contoso.\n"

    static func agreement(frequency: String? = "P1D", files: [[String: Any]]? = nil, perDevice: Bool = false) -> [String: Any] {
        var document: [String: Any] = [
            "displayName": "Contoso terms", "isViewingBeforeAcceptanceRequired": true, "isPerDeviceAcceptanceRequired": perDevice,
            "files": files ?? [
                [
                    "fileName": "terms-en.txt", "language": "en", "isDefault": true,
                    "fileData": ["data": Data(english.utf8).base64EncodedString()],
                ],
                ["fileName": "terms-fr.txt", "language": "fr-FR", "isDefault": false, "fileData": ["data": Data(french.utf8).base64EncodedString()]],
            ],
        ]
        if let frequency { document["userReacceptRequiredFrequency"] = frequency }
        return document
    }

    static func policy(_ agreementId: String) -> [String: Any] {
        [
            "displayName": "Terms of use for mail", "state": "enabled",
            "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": [Fixtures.mailApiId]]],
            "grantControls": ["operator": "OR", "builtInControls": [], "termsOfUse": [agreementId]],
        ]
    }

    @Test("agreements are validated with pointers, shown without their bytes, and cannot be deleted while a policy requires them")
    func agreements() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                for (document, pointer) in [
                    (Self.agreement(perDevice: true), "/isPerDeviceAcceptanceRequired"),
                    (Self.agreement(frequency: "every day"), "/userReacceptRequiredFrequency"),
                    (Self.agreement(files: [["fileName": "x.txt", "language": "en", "fileData": ["data": "%%%"]]]), "/files/0/fileData/data"),
                    (
                        Self.agreement(files: [["fileName": "x.bin", "language": "en", "fileData": ["data": Data([0, 1, 2, 255]).base64EncodedString()]]]),
                        "/files/0/fileData"
                    ),
                    (
                        Self.agreement(files: [
                            ["fileName": "a.txt", "language": "en", "isDefault": true, "fileData": ["data": "YQ=="]],
                            ["fileName": "b.txt", "language": "de", "isDefault": true, "fileData": ["data": "Yg=="]],
                        ]), "/files"
                    ),
                    (Self.agreement(files: []), "/files"),
                ] {
                    let refused = try await client.admin(.post, "/agreements", token: admin, json: document)
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)\""), "\(pointer): \(refused.text)")
                }
                let created = try await client.admin(.post, "/agreements", token: admin, json: Self.agreement())
                #expect(created.status == .created, "\(created.text)")
                let id = try #require(created.string("id"))
                let files = created["files"] as? [[String: Any]] ?? []
                #expect(files.count == 2 && files.allSatisfy { $0["data"] == nil && $0["fileData"] == nil && $0["size"] != nil }, "\(created.text)")
                // What an answer shows, sent back, is the same agreement: no change.
                let replaced = try await client.admin(.put, "/agreements/\(id)", token: admin, json: created.json, headers: [ExportedPolicyTests.ifMatch: "*"])
                #expect(replaced.status == .ok && replaced.headers[.eTag] == created.headers[.eTag], "\(replaced.text)")

                let unknown = try await client.admin(
                    .post, "/conditional-access/policies", token: admin, json: Self.policy("00000000-0000-4000-8000-00000000dead"))
                #expect(unknown.status == .badRequest && unknown.text.contains("\"/grantControls/termsOfUse/0\""), "\(unknown.text)")
                let policy = try await client.admin(.post, "/conditional-access/policies", token: admin, json: Self.policy(id))
                #expect(policy.status == .created, "\(policy.text)")
                let policyId = try #require(policy.string("id"))
                let deleting = try await client.admin(.delete, "/agreements/\(id)", token: admin, headers: [ExportedPolicyTests.ifMatch: "*"])
                #expect(deleting.status == .conflict && deleting.text.contains(policyId), "\(deleting.text)")

                // A bounded number per tenant (their files live in every node's memory).
                for _ in 1..<Agreement.maximumPerTenant {
                    #expect(try await client.admin(.post, "/agreements", token: admin, json: Self.agreement()).status == .created)
                }
                let tooMany = try await client.admin(.post, "/agreements", token: admin, json: Self.agreement())
                #expect(tooMany.status == .badRequest && tooMany.text.contains("the most it may"), "\(tooMany.text)")
                #expect(
                    try await client.admin(.put, "/agreements/\(id)", token: admin, json: created.json, headers: [ExportedPolicyTests.ifMatch: "*"]).status
                        == .ok)
            }
        }
    }

    @Test("the token endpoint asks for the page; the page shows the user's language; Accept records it and issues, Decline ends the sign-in")
    func page() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let id = try #require(try await client.admin(.post, "/agreements", token: admin, json: Self.agreement()).string("id"))
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: Self.policy(id)).status == .created)

                // Without the page: interaction_required (MSAL goes interactive).
                let silent = try await client.token(Grants.password(claims: nil))
                #expect(silent.status == .badRequest && silent.string("error") == "interaction_required" && silent.errorCode == 50158, "\(silent.text)")

                // Bob declines: the app hears access_denied, and the answer is recorded.
                let bob = Browser()
                let declinePage = try await bob.signIn(client, account: Fixtures.bob)
                #expect(
                    declinePage.status == .ok && declinePage.html.contains("Contoso terms") && declinePage.html.contains("Use the mail app"),
                    "\(declinePage.html.prefix(600))")
                let declined = try await bob.submit(client, declinePage, [("decision", "decline")])
                #expect(declined.status == .found && declined.delivered["error"] == "access_denied", "\(declined.delivered)")

                // The form is bound to the browser (its CSRF cookie) and to its sign-in session: another browser, or one
                // holding the CSRF cookie without the session, records nothing.
                let carol = Browser()
                let carolPage = try await carol.signIn(client, account: Fixtures.carol)
                let stranger = Browser()
                let forged = try await stranger.submit(client, carolPage, [("decision", "accept")])
                #expect(forged.status == .badRequest && forged.html.contains("could not be verified"), "\(forged.html.prefix(400))")
                let thief = Browser()
                thief.cookies = carol.cookies.filter { $0.name != "portcullis_session" }
                let stolen = try await thief.submit(client, carolPage, [("decision", "accept")])
                #expect(stolen.status == .badRequest && stolen.html.contains("another browser"), "\(stolen.html.prefix(400))")
                let none = try await client.admin(.get, "/agreements/\(id)/acceptances", token: admin)
                #expect(!none.text.contains(Fixtures.carol.id), "nothing recorded for Carol: \(none.text)")

                // Alice, in French: the French file; Accept → the code, and the token endpoint grants.
                let alice = Browser()
                alice.acceptLanguage = "fr-CA, en;q=0.5"
                let termsPage = try await alice.signIn(client)
                #expect(
                    termsPage.html.contains("Conditions d&#39;utilisation") || termsPage.html.contains("Conditions d'utilisation"),
                    "\(termsPage.html.prefix(800))")
                // A forged decision is not an answer.
                #expect(try await alice.submit(client, termsPage, [("decision", "maybe")]).status == .badRequest)
                let accepted = try await alice.submit(client, termsPage, [("decision", "accept")])
                let code = try #require(accepted.delivered["code"], "\(accepted.status) \(accepted.delivered) \(accepted.html.prefix(400))")
                #expect(try await client.form(TestEnvironment.tokenPath, Authorize.redeem(code)).status == .ok)
                #expect(try await client.token(Grants.password(claims: nil)).status == .ok, "accepted: the password grant passes too")

                let list = try await client.admin(.get, "/agreements/\(id)/acceptances", token: admin)
                let answers = list["value"] as? [[String: Any]] ?? []
                #expect(Set(answers.compactMap { $0["state"] as? String }) == ["accepted", "declined"], "\(list.text)")
                #expect(answers.first { $0["userId"] as? String == Fixtures.alice.id }?["expirationDateTime"] is String, "P1D: the acceptance ends")
                let audit = try await client.admin(.get, "/audit?kind=agreementAcceptance", token: admin)
                #expect(audit.text.contains("user:\(Fixtures.alice.id)"), "\(audit.text.prefix(400))")

                // What-if explains the control for each.
                let whatIf = try await client.admin(
                    .post, "/conditional-access/evaluate", token: admin,
                    json: ["signIn": ["userId": Fixtures.bob.id, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailApiId]])
                #expect(whatIf.text.contains("has not accepted the terms of use"), "\(whatIf.text.prefix(800))")
            }
        }
    }

    @Test("a PDF that must be read is opened before Accept counts; after the frequency the user accepts again")
    func pdfAndFrequency() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let pdf = Data("%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n".utf8)
                let document = Self.agreement(
                    frequency: "P1D", files: [["fileName": "terms.pdf", "language": "en", "fileData": ["data": pdf.base64EncodedString()]]])
                let id = try #require(try await client.admin(.post, "/agreements", token: admin, json: document).string("id"))
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: Self.policy(id)).status == .created)

                let alice = Browser()
                let page = try await alice.signIn(client)
                #expect(page.html.contains("Open terms.pdf (PDF)") && page.html.contains("Open and read the terms"), "\(page.html.prefix(800))")
                let unread = try await alice.submit(client, page, [("decision", "accept")])
                #expect(unread.status == .badRequest && unread.html.contains("Open the terms of use and read them"), "\(unread.html.prefix(600))")
                // The link the page gives: the PDF, as a PDF; the browser has opened it now.
                let link = try #require(unread.html.range(of: "id=\"terms-file\" href=\"")).upperBound
                let href = String(unread.html[link...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
                let file = try await alice.get(client, href)
                #expect(file.status == .ok && file.headers[.contentType] == "application/pdf" && file.html.hasPrefix("%PDF-"), "\(file.status) \(file.headers)")
                let accepted = try await alice.submit(client, unread, [("decision", "accept")])
                #expect(accepted.delivered["code"] != nil, "\(accepted.status) \(accepted.html.prefix(400))")
                #expect(try await client.token(Grants.password(claims: nil)).status == .ok)
                // A day and a minute later: the acceptance has ended, the page asks again.
                env.clock.advance(by: 86_400 + 60)
                #expect(try await client.token(Grants.password(claims: nil)).errorCode == 50158)
                let again = try await Browser().signIn(client)
                #expect(again.status == .ok && again.html.contains("Open terms.pdf"), "\(again.status) \(again.html.prefix(400))")
            }
        }
    }
}
