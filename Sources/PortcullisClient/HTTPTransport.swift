import Foundation
import PortcullisAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP the SDK needs, over `URLSession` (FoundationNetworking over libcurl on Linux).
struct HTTPTransport: Sendable {
    let session: URLSession
    let configuration: ClientConfiguration

    struct Reply: Sendable {
        let status: Int
        let body: Data
        /// `Retry-After` in seconds, when the server sent one (503 `temporarily_unavailable`).
        var retryAfter: TimeInterval? = nil
        var etag: String? = nil
        /// `DPoP-Nonce`: the nonce for the next proof to this server (RFC 9449 §8).
        var dpopNonce: String? = nil
        /// `WWW-Authenticate`: a PKeyAuth challenge at the token endpoint (PROTOCOL §18).
        var wwwAuthenticate: String? = nil
    }

    func send(
        _ url: URL, method: String, form: [(String, String)]? = nil, json: Data? = nil, bearer: String? = nil, correlationId: String,
        headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval? = nil
    ) async throws -> Reply {
        var request = URLRequest(url: url, timeoutInterval: timeout ?? configuration.timeout)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpMethod = method
        request.setValue(correlationId, forHTTPHeaderField: "client-request-id")
        request.setValue("true", forHTTPHeaderField: "return-client-request-id")
        request.setValue(configuration.sku, forHTTPHeaderField: "x-client-SKU")
        request.setValue(configuration.osDescription, forHTTPHeaderField: "x-client-OS")
        request.setValue(configuration.version, forHTTPHeaderField: "x-client-Ver")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let languages = configuration.acceptLanguage { request.setValue(languages, forHTTPHeaderField: "Accept-Language") }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let form {
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(Self.encode(form).utf8)
        } else if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = json
        } else if let body {
            request.httpBody = body
        }
        do {
            let (data, response) = try await session.data(for: request)
            let http = response as? HTTPURLResponse
            return Reply(
                status: http?.statusCode ?? 0, body: data,
                retryAfter: (http?.value(forHTTPHeaderField: "Retry-After")).flatMap(TimeInterval.init),
                etag: http?.value(forHTTPHeaderField: "ETag"), dpopNonce: http?.value(forHTTPHeaderField: "DPoP-Nonce"),
                wwwAuthenticate: http?.value(forHTTPHeaderField: "WWW-Authenticate"))
        } catch {
            throw PortcullisClientError.transport("\(method) \(url.path): \(error.localizedDescription)")
        }
    }

    static func encode(_ fields: [(String, String)]) -> String { FormEncoding.encode(fields) }

    /// A token request: with a DPoP proof when the configuration has a proof key, once more with the server's nonce when
    /// it asks for one (`use_dpop_nonce`, RFC 9449 §8); with a device key, saying it can prove the device and answering the
    /// server's PKeyAuth challenge once, on the same request (PROTOCOL §18).
    func token(form: [(String, String)], correlationId: String) async throws -> Reply {
        let endpoint = configuration.tokenEndpoint
        var headers: [String: String] = [:]
        if configuration.device != nil { headers["x-ms-PKeyAuth"] = "1.0" }
        var reply = try await token(form: form, correlationId: correlationId, headers: headers)
        if reply.status == 401, let device = configuration.device, let challenge = reply.wwwAuthenticate.flatMap(PKeyAuthAnswer.parameters) {
            headers = ["Authorization": try await PKeyAuthAnswer.answer(challenge, endpoint: endpoint, device: device)]
            reply = try await token(form: form, correlationId: correlationId, headers: headers)
        }
        return reply
    }

    private func token(form: [(String, String)], correlationId: String, headers: [String: String]) async throws -> Reply {
        let endpoint = configuration.tokenEndpoint
        guard let dpop = configuration.dpop else { return try await send(endpoint, method: "POST", form: form, correlationId: correlationId, headers: headers) }
        var reply = try await send(
            endpoint, method: "POST", form: form, correlationId: correlationId,
            headers: headers.merging(["DPoP": try await dpop.proof(method: "POST", url: endpoint)]) { $1 })
        dpop.remember(nonce: reply.dpopNonce, for: endpoint)
        if reply.status == 400, reply.dpopNonce != nil, (try? JSONDecoder().decode(OAuthErrorBody.self, from: reply.body))?.error == "use_dpop_nonce" {
            reply = try await send(
                endpoint, method: "POST", form: form, correlationId: correlationId,
                headers: headers.merging(["DPoP": try await dpop.proof(method: "POST", url: endpoint)]) { $1 })
            dpop.remember(nonce: reply.dpopNonce, for: endpoint)
        }
        return reply
    }
}

/// Builds the `claims` request parameter as MSAL does: the client capabilities in
/// `access_token.xms_cc.values`, merged into a claims challenge when there is one.
public enum ClaimsParameter {
    public static func build(capabilities: [String], challenge: String?) throws -> String? {
        guard !capabilities.isEmpty || challenge != nil else { return nil }
        var root: [String: Any] = [:]
        if let challenge {
            guard let data = challenge.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw PortcullisClientError(kind: .transport, message: "The claims challenge is not a JSON object.")
            }
            root = object
        }
        if !capabilities.isEmpty {
            var accessToken = root["access_token"] as? [String: Any] ?? [:]
            var values = ((accessToken["xms_cc"] as? [String: Any])?["values"] as? [String]) ?? []
            for capability in capabilities where !values.contains(where: { $0.lowercased() == capability.lowercased() }) { values.append(capability) }
            accessToken["xms_cc"] = ["values": values]
            root["access_token"] = accessToken
        }
        let data = try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
