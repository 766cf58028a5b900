import Foundation
import Hummingbird
import HummingbirdTesting
import NIOFoundationEssentialsCompat
import PortcullisServer
import PortcullisTesting
import Testing

@Suite("OpenAPI description")
struct OpenAPITests {
    @Test("GET /openapi.json is OpenAPI 3.1 and describes exactly the routes the server registers, each with its responses, errors included")
    func matchesTheRouter() async throws {
        try await withTestEnvironment { env in
            let router = env.server.router()
            let registered = Set(
                router.routes.map { route -> String in
                    let path = route.path.components.map { element -> String in
                        let text = element.description
                        return text.hasPrefix(":") ? "{\(text.dropFirst())}" : text
                    }.joined(separator: "/")
                    return "\(route.method.rawValue) /\(path)"
                })
            try await env.application().test(.router) { client in
                let (status, type, body) = try await client.execute(uri: "/openapi.json", method: .get) {
                    ($0.status, $0.headers[.contentType] ?? "", Data(buffer: $0.body))
                }
                #expect(status == .ok && type.hasPrefix("application/json"))
                // Served as the file in the sources is written (compiled in by the EmbedText plugin, byte for byte).
                let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                    .appendingPathComponent("Sources/PortcullisServer/Operations/openapi.json")
                #expect(body == (try Data(contentsOf: file)))
                let document = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
                #expect((document["openapi"] as? String)?.hasPrefix("3.1") == true)
                let paths = try #require(document["paths"] as? [String: [String: Any]])
                var described = Set<String>()
                for (path, item) in paths {
                    for (method, operation) in item where ["get", "put", "post", "delete", "patch", "head", "options"].contains(method) {
                        described.insert("\(method.uppercased()) \(path)")
                        let responses = (operation as? [String: Any])?["responses"] as? [String: Any] ?? [:]
                        #expect(!responses.isEmpty, "\(method.uppercased()) \(path) describes no responses")
                        // Every operation can answer an error (at least a malformed request, 400, from the HTTP layer; and 500):
                        // each declares what it can answer (issue 25.9).
                        #expect(
                            responses.keys.contains { $0.hasPrefix("4") } && responses["500"] != nil,
                            "\(method.uppercased()) \(path) declares no error response: \(responses.keys.sorted())")
                    }
                }
                // Every reference inside the document resolves (a dangling one stops schemathesis before it tests anything).
                let dangling = Self.references(in: document).filter { Self.resolve($0, in: document) == nil }
                #expect(dangling.isEmpty, "references that resolve to nothing: \(dangling.sorted())")
                #expect(registered.count >= 35, "\(registered.count) routes")
                // The Graph API is one catch-all route per method and version (`/v1.0/**`), its collections dispatched inside
                // (PROTOCOL §20): each catch-all is described by the Graph paths under it, and those count as registered.
                let catchAll = registered.filter { $0.hasSuffix("/**") }.map { String($0.dropLast(2)) }
                let exact = registered.filter { !$0.hasSuffix("/**") }
                let underCatchAll = described.filter { path in catchAll.contains { path.hasPrefix($0) } }
                #expect(catchAll.count == 8, "GET, POST, PATCH, DELETE of /v1.0 and GET, POST, PATCH, DELETE of /beta: \(catchAll.sorted())")
                for prefix in catchAll { #expect(underCatchAll.contains { $0.hasPrefix(prefix) }, "nothing described under \(prefix)**") }
                #expect(exact.subtracting(described).isEmpty, "registered but not described: \(exact.subtracting(described).sorted())")
                #expect(
                    described.subtracting(exact).subtracting(underCatchAll).isEmpty,
                    "described but not registered: \(described.subtracting(exact).subtracting(underCatchAll).sorted())")
            }
        }
    }

    /// Every local `$ref` (`#/…`) anywhere in a JSON value.
    static func references(in value: Any) -> Set<String> {
        switch value {
        case let object as [String: Any]:
            var found = Set<String>()
            if let reference = object["$ref"] as? String, reference.hasPrefix("#/") { found.insert(reference) }
            for child in object.values { found.formUnion(references(in: child)) }
            return found
        case let array as [Any]:
            return array.reduce(into: Set<String>()) { $0.formUnion(references(in: $1)) }
        default:
            return []
        }
    }

    /// The value a local reference points at (RFC 6901 unescaping), or nil.
    static func resolve(_ reference: String, in document: Any) -> Any? {
        reference.dropFirst(2).split(separator: "/", omittingEmptySubsequences: false).reduce(Optional(document)) { current, token in
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            return (current as? [String: Any])?[key]
        }
    }
}
