import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore
import PortcullisTokens

/// Push reception (RFC 8935, PROTOCOL §19): `POST /{tenant}/ssf/receiver/{transmitterId}` with one SET
/// (`application/secevent+jwt`) answers 202 once its events are carried out, or 400 with `{"err", "description"}`:
/// `access_denied` for a transmitter not registered here or a push without the `Authorization` value it must carry,
/// `invalid_key` and `authentication_failed` for keys and signatures, `invalid_issuer`, `invalid_audience`, and
/// `invalid_request` for everything else (a stale SET, a `jti` received before, a body that is not a SET).
struct SignalReceiverRoutes: Sendable {
    let receiver: SignalReceiver
    let tenants: TenantCache
    let credentials: CredentialHasher

    func register(on router: Router<PortcullisRequestContext>) {
        router.post("/:tenant/ssf/receiver/:transmitter") { request, context in
            do {
                try await push(request, context)
                return Response(status: .accepted)
            } catch let refusal as SharedSignalsRefusal {
                return JSONResponse.make(status: .badRequest, refusal.body)
            }
        }
    }

    func push(_ request: Request, _ context: PortcullisRequestContext) async throws {
        let denied = SharedSignalsRefusal(.accessDenied, "no transmitter of this tenant is registered here")
        guard let tenant = try await tenants.snapshot(tenantSegment: context.parameters.get("tenant") ?? ""),
            let given = context.parameters.get("transmitter"), given.count <= 64,
            let transmitter = tenant.contents.sharedSignalsTransmitters.first(where: { $0.id == PolicyID(given) })
        else { throw denied }
        // The push's `Authorization` (the admin's, or the one given the transmitter with the stream made there).
        let hashes = [transmitter.authorizationHeaderHash, transmitter.stream?.authorizationHeaderHash].compactMap { $0 }
        if !hashes.isEmpty {
            guard let header = request.headers[.authorization], credentials.verifySecret(header, against: hashes) else {
                throw SharedSignalsRefusal(.accessDenied, "the push does not carry the Authorization value this transmitter must send")
            }
        }
        let type = request.headers[.contentType].map { $0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces) } ?? ""
        guard type.equalsIgnoringCase("application/secevent+jwt") else {
            throw SharedSignalsRefusal(.invalidRequest, "the body must be one SET, Content-Type application/secevent+jwt")
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: SharedSignalsTransmitter.maximumSETBytes)
        } catch {
            throw SharedSignalsRefusal(.invalidRequest, "the SET is larger than \(SharedSignalsTransmitter.maximumSETBytes) bytes")
        }
        let token = String(decoding: body.readableBytesView, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if try await receiver.receive(token, from: transmitter, tenant: tenant) == .replayed {
            throw SharedSignalsRefusal(.invalidRequest, "a SET with this jti was received before")
        }
    }
}
