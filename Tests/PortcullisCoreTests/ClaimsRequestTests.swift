import Foundation
import PortcullisCore
import Testing

@Suite("claims request parameter")
struct ClaimsRequestTests {
    @Test(
        "capabilities are read case-insensitively, de-duplicated, and other claim requests are ignored",
        arguments: [
            (#"{"access_token":{"xms_cc":{"values":["protapp"]}}}"#, ["protapp"]),
            (#"{"access_token": {"xms_cc": {"values": ["ProtApp", "cp1"]}}}"#, ["protapp", "cp1"]),
            (#"{"access_token":{"xms_cc":{"values":["cp1","PROTAPP","protapp"]}}}"#, ["cp1", "protapp"]),
            (
                #"{"access_token":{"acrs":{"essential":true,"value":"c1"},"xms_cc":{"values":["protapp"]}},"id_token":{"auth_time":{"essential":true}}}"#,
                ["protapp"]
            ),
            (#"{"access_token":{"nbf":{"essential":true,"value":"1700000000"}}}"#, []),
            (#"{"id_token":{"acr":null}}"#, []),
            (#"{}"#, []),
            (#"{"access_token":{"xms_cc":{"values":["future-capability"]}}}"#, ["future-capability"]),
        ])
    func parses(_ text: String, _ expected: [String]) throws {
        #expect(try ClaimsRequest.parse(text).capabilities == expected)
    }

    @Test(
        "a pending request keeps its claims parsed, stored as the parameter's text: it reads back as the same value, and a client's own text (stored by earlier builds) reads too"
    )
    func storedForm() throws {
        let odd = ClaimsRequest(capabilities: ["cp1", "PROTAPP", #"a"b\c"#])
        #expect(try ClaimsRequest.parse(odd.text) == odd)
        let encoded = try JSONEncoder().encode(odd)
        #expect(try JSONDecoder().decode(ClaimsRequest.self, from: encoded) == odd)
        let legacy = try JSONEncoder().encode(#"{"id_token": {"auth_time": {"essential": true}}, "access_token": {"xms_cc": {"values": ["CP1"]}}}"#)
        #expect(try JSONDecoder().decode(ClaimsRequest.self, from: legacy).capabilities == ["cp1"])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ClaimsRequest.self, from: JSONEncoder().encode("[1]")) }
    }

    @Test("16 values of 64 characters are the most accepted")
    func bounds() throws {
        let values = (0..<16).map { "\"\(String(repeating: "x", count: 60))\($0 + 1000)\"" }.joined(separator: ",")
        #expect(try ClaimsRequest.parse(#"{"access_token":{"xms_cc":{"values":[\#(values)]}}}"#).capabilities.count == 16)
    }

    @Test("protapp is recognised in any case")
    func protApp() throws {
        #expect(try ClaimsRequest.parse(#"{"access_token":{"xms_cc":{"values":["PrOtApP"]}}}"#).declaresProtApp)
        #expect(try !ClaimsRequest.parse(#"{"access_token":{"xms_cc":{"values":["cp1"]}}}"#).declaresProtApp)
    }

    @Test(
        "malformed claims are invalid_request",
        arguments: [
            "not json", "[1,2]", "\"protapp\"", "42", #"{"access_token":"protapp"}"#, #"{"access_token":{"xms_cc":["protapp"]}}"#,
            #"{"access_token":{"xms_cc":{"values":"protapp"}}}"#, #"{"access_token":{"xms_cc":{"values":[1]}}}"#, "{",
            // Bounded: at most 16 values of at most 64 characters (a 49 KB token from one request otherwise).
            #"{"access_token":{"xms_cc":{"values":[\#((0..<17).map { "\"c\($0)\"" }.joined(separator: ","))]}}}"#,
            #"{"access_token":{"xms_cc":{"values":["\#(String(repeating: "a", count: 65))"]}}}"#,
        ])
    func malformed(_ text: String) {
        #expect(throws: TokenError.self) { try ClaimsRequest.parse(text) }
        do {
            _ = try ClaimsRequest.parse(text)
        } catch {
            #expect(error.code == .invalidRequest)
            #expect(error.aadsts == 90100)
        }
    }
}

@Suite("The nbf claims request (PROTOCOL §14.1)")
struct NotBeforeClaimsTests {
    @Test("nbf as a string (MSAL) or a number; round-trips through the text")
    func parses() throws {
        let request = try ClaimsRequest.parse(#"{"access_token": {"xms_cc": {"values": ["CP1"]}, "nbf": {"essential": true, "value": "1800000001"}}}"#)
        #expect(request.notBefore == 1_800_000_001 && request.declaresCP1)
        #expect(try ClaimsRequest.parse(request.text) == request)
        #expect(try ClaimsRequest.parse(#"{"access_token":{"nbf":{"value":1800000002}}}"#).notBefore == 1_800_000_002)
    }

    @Test("a value that is not a time is invalid_request", arguments: [#""soon""#, "-5", "[1]", #""99999999999999""#])
    func refuses(value: String) {
        #expect(throws: TokenError.self) { try ClaimsRequest.parse(#"{"access_token":{"nbf":{"value":\#(value)}}}"#) }
    }
}
