public import Foundation

/// How an application document's `secrets` become stored secrets, for the seeder and the admin API alike.
public enum ApplicationSecrets {
    /// The application with its secrets resolved against the stored one: a plaintext `secret` is hashed (its
    /// key ID follows from the hash, so the same secret imported twice is the same secret), a `keyId` keeps the
    /// stored secret of that ID, and a secret already stored keeps its creation time. Without a `secrets`
    /// member the stored secrets stay. `hash` is the server's keyed hash of a secret (`CredentialHasher`).
    public static func resolve(
        _ entry: DirectoryDocument.ApplicationEntry, stored: Application?, hash: (String) -> String, now: Date
    ) throws(ValidationError) -> Application {
        var application = entry.application
        guard let entries = entry.secretEntries else {
            application.secrets = stored?.secrets ?? []
            return application
        }
        let problems = ProblemCollector()
        var secrets: [ClientSecret] = []
        for item in entries {
            var secret: ClientSecret
            switch item {
            case .plaintext(let text, let displayName, let end):
                secret = ClientSecret(secretHash: hash(text), hint: String(text.prefix(3)), displayName: displayName, endDateTime: end)
            case .hashed(let hashed):
                secret = hashed
            case .existing(let keyId, let pointer):
                guard let kept = stored?.secrets.first(where: { $0.keyId == keyId }) else {
                    problems.add(
                        JSONPointer.appending(pointer, "keyId"),
                        "names no secret of this application; add secrets with POST /admin/v1/applications/{appId}/secrets.")
                    continue
                }
                secret = kept
            }
            if let kept = stored?.secrets.first(where: { $0.keyId == secret.keyId }) {
                secret.startDateTime = kept.startDateTime
                secret.hint = secret.hint ?? kept.hint
            } else {
                secret.startDateTime = now
            }
            if !secrets.contains(where: { $0.keyId == secret.keyId }) { secrets.append(secret) }
        }
        try problems.check()
        application.secrets = secrets
        return application
    }

    /// The application's certificates (PROTOCOL §21) resolved against the stored application: a certificate given is read
    /// by `read` (the server's X.509 reader; its key ID follows from its SHA-256 thumbprint, so the same certificate
    /// registered twice is one), a `keyId` keeps the stored certificate. Without a `keyCredentials` member the stored
    /// ones stay.
    public static func resolveCertificates(
        _ entry: DirectoryDocument.ApplicationEntry, stored: Application?,
        read: (String, String?) -> Result<KeyCredential, KeyCredentialProblem>
    ) throws(ValidationError) -> [KeyCredential] {
        guard let entries = entry.keyCredentialEntries else { return stored?.keyCredentials ?? [] }
        let problems = ProblemCollector()
        var credentials: [KeyCredential] = []
        for item in entries {
            switch item {
            case .certificate(let text, let displayName, let pointer):
                switch read(text, displayName) {
                case .success(var credential):
                    credential.keyId = RecordID(StableGUID.make(from: "certificate:" + credential.thumbprintSHA256))
                    if !credentials.contains(where: { $0.keyId == credential.keyId }) { credentials.append(credential) }
                case .failure(let problem):
                    problems.add(pointer, problem.message)
                }
            case .existing(let keyId, let pointer):
                guard let kept = stored?.keyCredentials.first(where: { $0.keyId == keyId }) else {
                    problems.add(JSONPointer.appending(pointer, "keyId"), "names no certificate of this application.")
                    continue
                }
                if !credentials.contains(where: { $0.keyId == kept.keyId }) { credentials.append(kept) }
            }
        }
        try problems.check()
        return credentials
    }

    /// A stored application as answers and the audit log show it: every secret without its hash.
    public static func withoutHashes(_ body: Data) -> Data {
        guard var object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return body }
        if let secrets = object["secrets"] as? [[String: Any]] {
            object["secrets"] = secrets.map { $0.filter { $0.key != "secretHash" } }
        }
        object.removeValue(forKey: "secretHashes")
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? body
    }
}
