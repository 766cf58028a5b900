import Foundation
import PortcullisCore
import Testing

/// OData as the Graph API reads it (PROTOCOL §20): `$filter` parsed once and evaluated over documents, the other query
/// options checked against the type's members, documents completed as Graph serialises them, evolvable enumerations.
@Suite("OData and Graph shapes")
struct ODataTests {
    let alice: JSONValue = [
        "id": "0c9e3a1f-5b7d-4e2a-8c6f-1d3b5a7e9f01", "displayName": "Alice Anders", "userPrincipalName": "alice@contoso.example",
        "accountEnabled": true, "userType": "Member", "businessPhones": [],
        "identities": [["signInType": "userPrincipalName", "issuer": "contoso.example", "issuerAssignedId": "alice@contoso.example"]],
    ]
    let bob: JSONValue = [
        "id": "1d8f4b2a-6c8e-4f3b-9d7a-2e4c6b8f0a02", "displayName": "Bob O'Brien", "userPrincipalName": "bob@contoso.example",
        "accountEnabled": false, "userType": "Guest", "businessPhones": ["+1 555 0100"],
    ]

    func matching(_ filter: String) throws -> [String] {
        let parsed = try ODataFilter.parse(filter)
        return [alice, bob].filter(parsed.matches).compactMap { $0["displayName"]?.stringValue }
    }

    @Test("comparisons, in, startswith, not, and/or with parentheses, any() — strings compare ignoring case as the directory does")
    func filters() throws {
        #expect(try matching("displayName eq 'alice anders'") == ["Alice Anders"])
        #expect(try matching("displayName ne 'Alice Anders'") == ["Bob O'Brien"])
        #expect(try matching("displayName eq 'Bob O''Brien'") == ["Bob O'Brien"], "'' is a quote inside a string")
        #expect(try matching("startswith(userPrincipalName,'ALICE@')") == ["Alice Anders"])
        #expect(try matching("endswith(userPrincipalName, '@contoso.example')") == ["Alice Anders", "Bob O'Brien"])
        #expect(try matching("accountEnabled eq false") == ["Bob O'Brien"])
        #expect(try matching("userType in ('Guest', 'External')") == ["Bob O'Brien"])
        #expect(try matching("not (userType eq 'Guest') and accountEnabled eq true") == ["Alice Anders"])
        #expect(try matching("userType eq 'Guest' or startswith(displayName, 'A')") == ["Alice Anders", "Bob O'Brien"])
        #expect(try matching("id eq 1d8f4b2a-6c8e-4f3b-9d7a-2e4c6b8f0a02") == ["Bob O'Brien"], "a bare GUID is a value")
        #expect(try matching("identities/any(c:c/issuerAssignedId eq 'alice@contoso.example' and c/issuer eq 'contoso.example')") == ["Alice Anders"])
        #expect(try matching("businessPhones/any(p: startswith(p, '+1'))") == ["Bob O'Brien"])
        #expect(try matching("businessPhones/any()") == ["Bob O'Brien"])
        #expect(try matching("missing eq null") == ["Alice Anders", "Bob O'Brien"], "an absent member is null")
    }

    @Test("a filter that cannot be read is a syntax error with a sentence, never a crash; size and depth are bounded")
    func refusals() {
        for bad in [
            "displayName eq", "displayName eq 'open", "(displayName eq 'x'", "displayName like 'x'", "members/all(m: m eq 'x')",
            "startswith(displayName)", "userType in ()", "displayName eq 'x' and", "#", "x/any(: y)",
        ] {
            #expect(throws: ODataFilter.SyntaxError.self, "\(bad)") { try ODataFilter.parse(bad) }
        }
        #expect(throws: ODataFilter.SyntaxError.self) {
            try ODataFilter.parse(String(repeating: "(", count: 40) + "a eq 1" + String(repeating: ")", count: 40))
        }
        #expect(throws: ODataFilter.SyntaxError.self) { try ODataFilter.parse("a eq '" + String(repeating: "x", count: 5000) + "'") }
        #expect(throws: ODataFilter.SyntaxError.self) {
            try ODataFilter.parse("a in (" + (0...100).map(String.init).joined(separator: ",") + ")")
        }
    }

    @Test("the query options: unknown members and unsupported options are Graph's 400s; a page, its count and where the next starts")
    func query() throws {
        func read(_ options: [String: String]) throws(ODataQuery.Refusal) -> ODataQuery {
            try ODataQuery.read(type: "user") { options[$0] }
        }
        #expect(throws: ODataQuery.Refusal.self) { try read(["$filter": "nickname eq 'x'"]) }
        #expect(throws: ODataQuery.Refusal.self) { try read(["$select": "displayName,nickname"]) }
        #expect(throws: ODataQuery.Refusal.self) { try read(["$orderby": "jobTitle"]) }
        #expect(throws: ODataQuery.Refusal.self) { try read(["$top": "0"]) }
        #expect(throws: ODataQuery.Refusal.self) { try read(["$top": "1000"]) }
        #expect(throws: ODataQuery.Refusal.self) { try read(["$skiptoken": "42"]) }
        #expect(throws: ODataQuery.Refusal.self) { try read(["$search": "\"displayName:a\""]) }
        #expect(throws: ODataQuery.Refusal.self) { try read(["$expand": "manager"]) }
        let documents = (0..<7).map { index -> JSONValue in ["id": .string("id-\(index)"), "displayName": .string("User \(6 - index)")] }
        var query = try read(["$orderby": "displayName desc", "$top": "3", "count": "true", "$select": "displayName"])
        var page = query.page(documents, pageSize: 100)
        #expect(page.value.compactMap { $0["displayName"]?.stringValue } == ["User 6", "User 5", "User 4"] && page.count == 7 && page.next == 3)
        query.skip = SkipToken.position(SkipToken.make(position: page.next!))!
        page = query.page(documents, pageSize: 100)
        #expect(page.value.compactMap { $0["displayName"]?.stringValue } == ["User 3", "User 2", "User 1"] && page.next == 6)
        #expect(query.selected(documents[0]) == ["id": "id-0", "displayName": "User 6"], "id is always kept")
        query.skip = 6
        #expect(query.page(documents, pageSize: 100).next == nil, "the last page has no next link")
    }

    @Test("documents complete as Graph serialises them: every member, absent collections [] and values null, complex members in turn")
    func complete() {
        let policy: JSONValue = [
            "id": "p", "displayName": "P", "state": "enabled",
            "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]]],
            "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
        ]
        let shown = GraphSchema.complete(policy, type: "conditionalAccessPolicy")
        #expect(shown["sessionControls"] == .null && shown["templateId"] == .null && shown["createdDateTime"] == .null)
        #expect(shown["conditions"]?["platforms"] == .null && shown["conditions"]?["clientAppTypes"] == .array([]))
        #expect(shown["conditions"]?["users"]?["excludeGroups"] == .array([]) && shown["conditions"]?["users"]?["includeGuestsOrExternalUsers"] == .null)
        #expect(shown["grantControls"]?["termsOfUse"] == .array([]) && shown["grantControls"]?["authenticationStrength"] == .null)
        #expect(shown["conditions"]?["users"]?["includeUsers"] == ["All"], "what was there stays")
        for member in GraphSchema.members(of: "conditionalAccessPolicy") ?? [] { #expect(shown[member.name] != nil, "\(member.name)") }
    }

    @Test("evolvable enums: members after unknownFutureValue read unknownFutureValue unless the client asks for them")
    func evolvable() {
        let policy: JSONValue = [
            "grantControls": ["builtInControls": ["mfa", "riskRemediation"]],
            "conditions": ["platforms": ["includePlatforms": ["linux", "iOS"], "excludePlatforms": []]],
        ]
        let hidden = EvolvableEnums.hidingLateMembers(policy, type: "conditionalAccessPolicy")
        #expect(hidden["grantControls"]?["builtInControls"] == ["mfa", "unknownFutureValue"])
        #expect(hidden["conditions"]?["platforms"]?["includePlatforms"] == ["unknownFutureValue", "iOS"])
        let strength: JSONValue = ["allowedCombinations": ["fido2", "password,qrCodePin"]]
        #expect(EvolvableEnums.hidingLateMembers(strength, type: "authenticationStrengthPolicy")["allowedCombinations"] == ["fido2", "unknownFutureValue"])
        #expect(EvolvableEnums.hidingLateMembers(policy, type: "user") == policy, "types without late members are unchanged")
    }

    @Test("Graph's permission names: a ReadWrite permission reads; a read permission never writes")
    func permissions() {
        let policies = GraphPermission.conditionalAccess
        #expect(policies.allows(["Policy.Read.All"], writing: false) && !policies.allows(["Policy.Read.All"], writing: true))
        #expect(
            policies.allows(["Policy.ReadWrite.ConditionalAccess"], writing: false) && policies.allows(["Policy.ReadWrite.ConditionalAccess"], writing: true))
        #expect(!policies.allows(["Directory.ReadWrite.All"], writing: true), "directory permissions do not write conditional access, as in Graph")
        #expect(GraphPermission.all.contains("IdentityRiskyUser.ReadWrite.All") && BuiltInResources.graph.appRoles == GraphPermission.all)
    }
}
