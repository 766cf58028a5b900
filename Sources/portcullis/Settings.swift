import Foundation
import PortcullisCore
import PortcullisServer
import PortcullisTokens

/// Server settings from `Config/portcullis.json`, then `PORTCULLIS_…` environment variables, then flags.
struct Settings {
    var configDirectory = "Config"
    var dataDirectory = ".portcullis"
    var keysDirectory = "Keys"
    var host = "127.0.0.1"
    var port = 8080
    var baseURL: String?
    var tlsCertificate: String?
    var tlsKey: String?
    var sqlitePath: String?
    var sqliteSynchronous = "FULL"
    var postgresURL: String?
    var postgresMaximumConnections = 20
    var signingAlgorithm = SigningAlgorithm.es256
    var accessTokenType = AccessTokenType.jwt
    var accessTokenLifetime: TimeInterval = 3600
    var refreshTokenLifetime: TimeInterval = 90 * 24 * 3600
    var bcryptCost: UInt8 = 10
    var logLevel = "info"
    var trustedProxies: [IPRange] = []
    var signInRetentionDays = 30
    var signInAggregationSeconds = 3600
    var signInMaximumMegabytes = 4096
    var sweepIntervalSeconds = 30
    var idleEnrollmentDays = 90
    var callbackMaxAttempts = 10
    var callbackBaseDelaySeconds = 1
    var callbackMaxDelaySeconds = 300
    var callbackAllowPrivateNetworks = false
    /// `callbacks.allowLoopback`: deliveries to loopback (development, tests); off by default (PROTOCOL §14.2).
    var callbackAllowLoopback = false
    /// `signals.minimumVerificationIntervalSeconds` (SSF `min_verification_interval`).
    var signalsMinimumVerificationSeconds = 10
    var callbackRetentionDays = 7
    var maximumEnrollmentsPerAccount = 20
    var passwordQueueLimit = 64
    var maximumBodyBytes = 64 * 1024
    var lockout = LockoutPolicy()
    var postgresCAFile: String?
    /// No store operation waits longer (PROTOCOL §2.4).
    var storeDeadlineMilliseconds = 2000
    /// How long SIGTERM waits for requests in flight before cancelling them.
    var shutdownGraceSeconds = 10
    /// What access tokens' `aud` names.
    var audienceFormat = GrantSettings.AudienceFormat.applicationId
    /// How long readiness answers 503 on SIGTERM before the listener closes.
    var shutdownDrainMilliseconds = 1000
    /// Seed the directory's plaintext development credentials even when listening beyond loopback.
    var demo = false
    /// Sessions, codes and device codes (PROTOCOL §9).
    var interactive = SignInSettings()
    /// The IP-to-country table (PROTOCOL §13) and how often it is looked at for changes.
    var countryTable: String?
    var countryTableReloadSeconds = 10
    /// The operator's address lists for risk (PROTOCOL §19): one CIDR per line, reloaded as the country table is.
    var anonymizerList: String?
    var maliciousList: String?
    var riskDetections = true
    /// Whether DPoP proofs must carry a server nonce (`tokens.dpopNonce`: `required` or `off`; PROTOCOL §15).
    var dpopNonceRequired = true
    /// `tokens.continuousAccessTokenLifetimeSeconds` (PROTOCOL §14.1).
    var continuousAccessTokenLifetime: TimeInterval = 24 * 3600
    /// `signals.pendingPerStream`, `signals.longestPollSeconds` (PROTOCOL §14.2).
    var signalsPendingPerStream = 10_000
    var signalsLongestPollSeconds = 30
    /// `callbacks.caFile` (its older name `signals.receiverCaFile` still read): roots trusted beside the system's for
    /// transmitters and federated issuers (PROTOCOL §19, §21). `signals.receiverPollIntervalSeconds` (PROTOCOL §19).
    var callbackCAFile: String?
    var legacyReceiverCAFile: String?
    var signalsReceiverPollSeconds = 5
    /// `passkeys.metadataBlob`, `passkeys.metadataRoot` (PROTOCOL §12.1): a FIDO metadata BLOB file, and the PEM root its
    /// signature chain must verify to (FIDO's when absent).
    var passkeyMetadataBlob: String?
    var passkeyMetadataRoot: String?

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// The keys `portcullis.json` may hold (strict: a typo is an error, not a silently ignored setting).
    mutating func apply(file url: URL) throws {
        guard let data = try? Data(contentsOf: url) else { return }
        guard let root = JSONValue.parse(data) else { throw Problem(description: "\(url.path): not valid JSON") }
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(root, at: "", problems: problems) else {
            throw Problem(description: "\(url.path): must be a JSON object")
        }
        reader.rejectUnknownMembers(allowed: [
            "$schema", "baseURL", "host", "port", "dataDirectory", "keysDirectory", "tls", "storage", "tokens", "passwords",
            "logLevel", "trustedProxies", "signIns", "compliance", "callbacks", "shutdownGraceSeconds",
            "shutdownDrainMilliseconds", "interactiveSignIn", "maximumBodyBytes", "network", "signals", "passkeys", "risk",
        ])
        if let risk = reader.object("risk") {
            risk.rejectUnknownMembers(allowed: ["anonymizerList", "maliciousList", "detections"])
            riskDetections = risk.bool("detections") ?? riskDetections
            anonymizerList = risk.string("anonymizerList") ?? anonymizerList
            maliciousList = risk.string("maliciousList") ?? maliciousList
        }
        if let passkeys = reader.object("passkeys") {
            passkeys.rejectUnknownMembers(allowed: ["metadataBlob", "metadataRoot"])
            passkeyMetadataBlob = passkeys.string("metadataBlob") ?? passkeyMetadataBlob
            passkeyMetadataRoot = passkeys.string("metadataRoot") ?? passkeyMetadataRoot
        }
        if let network = reader.object("network") {
            network.rejectUnknownMembers(allowed: ["countryTable", "countryTableReloadSeconds"])
            countryTable = network.string("countryTable") ?? countryTable
            countryTableReloadSeconds = network.integer("countryTableReloadSeconds", in: 1...86400) ?? countryTableReloadSeconds
        }
        maximumBodyBytes = reader.integer("maximumBodyBytes", in: 1024...(16 * 1024 * 1024)) ?? maximumBodyBytes
        shutdownDrainMilliseconds = reader.integer("shutdownDrainMilliseconds", in: 0...60000) ?? shutdownDrainMilliseconds
        shutdownGraceSeconds = reader.integer("shutdownGraceSeconds", in: 1...600) ?? shutdownGraceSeconds
        if let proxies = reader.strings("trustedProxies") {
            trustedProxies = []
            for (text, pointer) in proxies {
                if let range = IPRange(text) { trustedProxies.append(range) } else { problems.add(pointer, "'\(text)' is not a CIDR range.") }
            }
        }
        if let signIns = reader.object("signIns") {
            signIns.rejectUnknownMembers(allowed: ["retentionDays", "aggregationWindowSeconds", "maximumMegabytes"])
            signInRetentionDays = signIns.integer("retentionDays", in: 1...3650) ?? signInRetentionDays
            signInAggregationSeconds = signIns.integer("aggregationWindowSeconds", in: 0...86400) ?? signInAggregationSeconds
            signInMaximumMegabytes = signIns.integer("maximumMegabytes", in: 0...10_000_000) ?? signInMaximumMegabytes
        }
        if let interactive = reader.object("interactiveSignIn") {
            interactive.rejectUnknownMembers(allowed: [
                "sessionLifetimeSeconds", "sessionIdleSeconds", "sessionsPerUser", "codeLifetimeSeconds", "deviceCodeLifetimeSeconds",
                "deviceCodeIntervalSeconds", "pendingDeviceCodesPerTenant", "pendingDeviceCodesPerClient", "pendingDeviceCodesPerAddress",
                "formLifetimeSeconds",
            ])
            var settings = self.interactive
            settings.sessionLifetime = interactive.integer("sessionLifetimeSeconds", in: 300...(90 * 86400)).map(TimeInterval.init) ?? settings.sessionLifetime
            settings.sessionIdleTimeout = interactive.integer("sessionIdleSeconds", in: 60...(90 * 86400)).map(TimeInterval.init) ?? settings.sessionIdleTimeout
            settings.sessionsPerUser = interactive.integer("sessionsPerUser", in: 1...1000) ?? settings.sessionsPerUser
            settings.codeLifetime = interactive.integer("codeLifetimeSeconds", in: 5...60).map(TimeInterval.init) ?? settings.codeLifetime
            settings.deviceCodeLifetime = interactive.integer("deviceCodeLifetimeSeconds", in: 60...3600).map(TimeInterval.init) ?? settings.deviceCodeLifetime
            settings.deviceCodeInterval = interactive.integer("deviceCodeIntervalSeconds", in: 1...60) ?? settings.deviceCodeInterval
            settings.pendingDeviceCodesPerTenant = interactive.integer("pendingDeviceCodesPerTenant", in: 1...100_000) ?? settings.pendingDeviceCodesPerTenant
            settings.pendingDeviceCodesPerClient = interactive.integer("pendingDeviceCodesPerClient", in: 1...100_000) ?? settings.pendingDeviceCodesPerClient
            settings.pendingDeviceCodesPerAddress =
                interactive.integer("pendingDeviceCodesPerAddress", in: 1...100_000) ?? settings.pendingDeviceCodesPerAddress
            settings.formLifetime = interactive.integer("formLifetimeSeconds", in: 60...86400).map(TimeInterval.init) ?? settings.formLifetime
            self.interactive = settings
        }
        if let compliance = reader.object("compliance") {
            compliance.rejectUnknownMembers(allowed: ["sweepIntervalSeconds", "idleEnrollmentDays", "maximumEnrollmentsPerAccount"])
            sweepIntervalSeconds = compliance.integer("sweepIntervalSeconds", in: 1...3600) ?? sweepIntervalSeconds
            idleEnrollmentDays = compliance.integer("idleEnrollmentDays", in: 1...3650) ?? idleEnrollmentDays
            maximumEnrollmentsPerAccount = compliance.integer("maximumEnrollmentsPerAccount", in: 1...1000) ?? maximumEnrollmentsPerAccount
        }
        if let callbacks = reader.object("callbacks") {
            callbacks.rejectUnknownMembers(allowed: [
                "maxAttempts", "baseDelaySeconds", "maxDelaySeconds", "allowPrivateNetworks", "allowLoopback", "retentionDays", "caFile",
            ])
            callbackCAFile = callbacks.string("caFile") ?? callbackCAFile
            callbackAllowPrivateNetworks = callbacks.bool("allowPrivateNetworks") ?? callbackAllowPrivateNetworks
            callbackAllowLoopback = callbacks.bool("allowLoopback") ?? callbackAllowLoopback
            callbackRetentionDays = callbacks.integer("retentionDays", in: 1...3650) ?? callbackRetentionDays
            callbackMaxAttempts = callbacks.integer("maxAttempts", in: 1...100) ?? callbackMaxAttempts
            callbackBaseDelaySeconds = callbacks.integer("baseDelaySeconds", in: 1...3600) ?? callbackBaseDelaySeconds
            callbackMaxDelaySeconds = callbacks.integer("maxDelaySeconds", in: 1...86400) ?? callbackMaxDelaySeconds
        }
        if let value = reader.string("baseURL") { baseURL = value }
        if let value = reader.string("host") { host = value }
        if let value = reader.integer("port", in: 0...65535) { port = value }
        if let value = reader.string("dataDirectory") { dataDirectory = value }
        if let value = reader.string("keysDirectory") { keysDirectory = value }
        if let value = reader.string("logLevel") { logLevel = value }
        if let tls = reader.object("tls") {
            tls.rejectUnknownMembers(allowed: ["certificate", "key"])
            tlsCertificate = tls.string("certificate") ?? tlsCertificate
            tlsKey = tls.string("key") ?? tlsKey
        }
        if let storage = reader.object("storage") {
            storage.rejectUnknownMembers(allowed: ["sqlite", "postgres", "deadlineMilliseconds"])
            storeDeadlineMilliseconds = storage.integer("deadlineMilliseconds", in: 50...60000) ?? storeDeadlineMilliseconds
            if let sqlite = storage.object("sqlite") {
                sqlite.rejectUnknownMembers(allowed: ["path", "synchronous"])
                sqlitePath = sqlite.string("path") ?? sqlitePath
                sqliteSynchronous = sqlite.enumeration("synchronous", allowed: ["FULL", "NORMAL", "EXTRA"]) ?? sqliteSynchronous
            }
            if let postgres = storage.object("postgres") {
                postgres.rejectUnknownMembers(allowed: ["url", "maximumConnections", "caFile"])
                postgresURL = postgres.string("url") ?? postgresURL
                postgresCAFile = postgres.string("caFile") ?? postgresCAFile
                postgresMaximumConnections = postgres.integer("maximumConnections", in: 1...500) ?? postgresMaximumConnections
            }
        }
        if let tokens = reader.object("tokens") {
            tokens.rejectUnknownMembers(allowed: [
                "signingAlgorithm", "accessTokenType", "accessTokenLifetimeSeconds", "refreshTokenLifetimeSeconds", "audience", "dpopNonce",
                "continuousAccessTokenLifetimeSeconds",
            ])
            if let value = tokens.integer("continuousAccessTokenLifetimeSeconds", in: 300...(7 * 86400)) {
                continuousAccessTokenLifetime = TimeInterval(value)
            }
            if let value = tokens.enumeration("dpopNonce", allowed: ["required", "off"]) { dpopNonceRequired = value == "required" }
            if let value = tokens.enumeration("audience", allowed: GrantSettings.AudienceFormat.allCases.map(\.rawValue)) {
                audienceFormat = GrantSettings.AudienceFormat(rawValue: value) ?? audienceFormat
            }
            if let value = tokens.enumeration("signingAlgorithm", allowed: SigningAlgorithm.allCases.map(\.rawValue)) {
                signingAlgorithm = SigningAlgorithm(rawValue: value) ?? signingAlgorithm
            }
            if let value = tokens.enumeration("accessTokenType", allowed: ["JWT", "at+jwt"]) {
                accessTokenType = AccessTokenType(rawValue: value) ?? accessTokenType
            }
            if let value = tokens.integer("accessTokenLifetimeSeconds", in: 60...86400) { accessTokenLifetime = TimeInterval(value) }
            if let value = tokens.integer("refreshTokenLifetimeSeconds", in: 300...(365 * 86400)) { refreshTokenLifetime = TimeInterval(value) }
        }
        if let signals = reader.object("signals") {
            signals.rejectUnknownMembers(allowed: [
                "pendingPerStream", "longestPollSeconds", "minimumVerificationIntervalSeconds", "receiverCaFile", "receiverPollIntervalSeconds",
            ])
            legacyReceiverCAFile = signals.string("receiverCaFile") ?? legacyReceiverCAFile
            signalsReceiverPollSeconds = signals.integer("receiverPollIntervalSeconds", in: 1...3600) ?? signalsReceiverPollSeconds
            signalsMinimumVerificationSeconds = signals.integer("minimumVerificationIntervalSeconds", in: 0...3600) ?? signalsMinimumVerificationSeconds
            signalsPendingPerStream = signals.integer("pendingPerStream", in: 100...1_000_000) ?? signalsPendingPerStream
            signalsLongestPollSeconds = signals.integer("longestPollSeconds", in: 1...300) ?? signalsLongestPollSeconds
        }
        if let passwords = reader.object("passwords") {
            passwords.rejectUnknownMembers(allowed: ["bcryptCost", "queueLimit", "lockout"])
            if let value = passwords.integer("bcryptCost", in: 4...31) { bcryptCost = UInt8(value) }
            passwordQueueLimit = passwords.integer("queueLimit", in: 0...10000) ?? passwordQueueLimit
            if let lockout = passwords.object("lockout") {
                lockout.rejectUnknownMembers(allowed: [
                    "accountThreshold", "addressThreshold", "factorThreshold", "deviceCodeThreshold", "windowSeconds", "firstLockSeconds", "maximumLockSeconds",
                ])
                self.lockout.deviceCodeThreshold = lockout.integer("deviceCodeThreshold", in: 1...100_000) ?? self.lockout.deviceCodeThreshold
                self.lockout.factorThreshold = lockout.integer("factorThreshold", in: 1...1000) ?? self.lockout.factorThreshold
                self.lockout.accountThreshold = lockout.integer("accountThreshold", in: 1...1000) ?? self.lockout.accountThreshold
                self.lockout.addressThreshold = lockout.integer("addressThreshold", in: 1...100_000) ?? self.lockout.addressThreshold
                self.lockout.window = lockout.integer("windowSeconds", in: 10...86400).map(TimeInterval.init) ?? self.lockout.window
                self.lockout.firstLock = lockout.integer("firstLockSeconds", in: 1...86400).map(TimeInterval.init) ?? self.lockout.firstLock
                self.lockout.maximumLock = lockout.integer("maximumLockSeconds", in: 1...(7 * 86400)).map(TimeInterval.init) ?? self.lockout.maximumLock
            }
        }
        if !problems.problems.isEmpty {
            throw Problem(description: problems.problems.map { "\(url.path):\($0)" }.joined(separator: "\n"))
        }
    }

    mutating func apply(environment: [String: String]) throws {
        func value(_ name: String) -> String? { environment["PORTCULLIS_\(name)"].flatMap { $0.isEmpty ? nil : $0 } }
        if let v = value("CONFIG") { configDirectory = v }
        if let v = value("DATA") { dataDirectory = v }
        if let v = value("KEYS") { keysDirectory = v }
        if let v = value("HOST") { host = v }
        if let v = value("PORT") {
            guard let port = Int(v), (0...65535).contains(port) else { throw Problem(description: "PORTCULLIS_PORT must be a port number") }
            self.port = port
        }
        if let v = value("BASE_URL") { baseURL = v }
        if let v = value("TLS_CERT") { tlsCertificate = v }
        if let v = value("TLS_KEY") { tlsKey = v }
        if let v = value("SQLITE_PATH") { sqlitePath = v }
        if let v = value("SQLITE_SYNCHRONOUS") { sqliteSynchronous = v.uppercased() }
        if let v = value("POSTGRES_URL") { postgresURL = v }
        if let v = value("POSTGRES_CA_FILE") { postgresCAFile = v }
        if let v = value("SIGN_IN_AGGREGATION_SECONDS") {
            guard let seconds = Int(v), (0...86400).contains(seconds) else {
                throw Problem(description: "PORTCULLIS_SIGN_IN_AGGREGATION_SECONDS must be 0…86400")
            }
            signInAggregationSeconds = seconds
        }
        if let v = value("SHUTDOWN_DRAIN_MS") {
            guard let milliseconds = Int(v), (0...60000).contains(milliseconds) else {
                throw Problem(description: "PORTCULLIS_SHUTDOWN_DRAIN_MS must be 0…60000")
            }
            shutdownDrainMilliseconds = milliseconds
        }
        if let v = value("TOKEN_AUDIENCE") {
            guard let format = GrantSettings.AudienceFormat(rawValue: v) else {
                throw Problem(description: "PORTCULLIS_TOKEN_AUDIENCE must be applicationId or identifierUri")
            }
            audienceFormat = format
        }
        if let v = value("STORE_DEADLINE_MS") {
            guard let milliseconds = Int(v), (50...60000).contains(milliseconds) else {
                throw Problem(description: "PORTCULLIS_STORE_DEADLINE_MS must be 50…60000")
            }
            storeDeadlineMilliseconds = milliseconds
        }
        if let v = value("DEMO") { demo = ["1", "true", "yes"].contains(v.lowercased()) }
        if let v = value("CALLBACKS_ALLOW_PRIVATE_NETWORKS") { callbackAllowPrivateNetworks = ["1", "true", "yes"].contains(v.lowercased()) }
        if let v = value("CALLBACKS_ALLOW_LOOPBACK") { callbackAllowLoopback = ["1", "true", "yes"].contains(v.lowercased()) }
        if let v = value("SIGNING_ALGORITHM") {
            guard let alg = SigningAlgorithm(rawValue: v.uppercased()) else {
                throw Problem(description: "PORTCULLIS_SIGNING_ALGORITHM must be ES256 or RS256")
            }
            signingAlgorithm = alg
        }
        if let v = value("ACCESS_TOKEN_TYPE") {
            guard let type = AccessTokenType(rawValue: v) else { throw Problem(description: "PORTCULLIS_ACCESS_TOKEN_TYPE must be JWT or at+jwt") }
            accessTokenType = type
        }
        if let v = value("LOG_LEVEL") { logLevel = v }
        if let v = value("COUNTRY_TABLE") { countryTable = v }
        if let v = value("ANONYMIZER_LIST") { anonymizerList = v }
        if let v = value("MALICIOUS_LIST") { maliciousList = v }
        if let v = value("SIGNALS_RECEIVER_CA_FILE") { legacyReceiverCAFile = v }
        if let v = value("CALLBACKS_CA_FILE") { callbackCAFile = v }
        if let v = value("SIGNALS_RECEIVER_POLL_SECONDS") {
            guard let seconds = Int(v), (1...3600).contains(seconds) else {
                throw Problem(description: "PORTCULLIS_SIGNALS_RECEIVER_POLL_SECONDS must be 1…3600")
            }
            signalsReceiverPollSeconds = seconds
        }
        if let v = value("RISK_DETECTIONS") { riskDetections = !["0", "false", "no", "off"].contains(v) }
        if let v = value("PASSKEY_METADATA_BLOB") { passkeyMetadataBlob = v }
        if let v = value("PASSKEY_METADATA_ROOT") { passkeyMetadataRoot = v }
        if let v = value("BCRYPT_COST") {
            guard let cost = UInt8(v), (4...31).contains(cost) else { throw Problem(description: "PORTCULLIS_BCRYPT_COST must be 4…31") }
            bcryptCost = cost
        }
    }

    var resolvedBaseURL: String {
        if let baseURL { return baseURL }
        let scheme = tlsCertificate == nil ? "http" : "https"
        let hostPart = host.contains(":") ? "[\(host)]" : (host == "0.0.0.0" ? "127.0.0.1" : host)
        return "\(scheme)://\(hostPart):\(port)"
    }

    /// The FIDO metadata BLOB named by `passkeys.metadataBlob`, read and verified (empty when none is named). A BLOB
    /// that cannot be read or does not verify stops the start: the operator asked for it.
    func passkeyMetadata(at time: Date) async throws -> FidoMetadata {
        guard let path = passkeyMetadataBlob else { return .empty }
        func read(_ path: String, _ setting: String) throws -> String {
            let url = URL(fileURLWithPath: path)
            let size = (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
            guard size <= FidoMetadata.maximumBytes, let data = try? Data(contentsOf: url), let text = String(data: data, encoding: .utf8) else {
                throw Problem(description: "\(setting) (\(path)) cannot be read (at most \(FidoMetadata.maximumBytes / 1_048_576) MiB of text)")
            }
            return text
        }
        let blob = try read(path, "passkeys.metadataBlob")
        let root = try passkeyMetadataRoot.map { try read($0, "passkeys.metadataRoot") }
        do {
            return try await FidoMetadata.load(blob: blob, rootPEM: root, at: time)
        } catch {
            throw Problem(description: "passkeys.metadataBlob (\(path)): \(error.description)")
        }
    }

    var resolvedSQLitePath: String { sqlitePath ?? (dataDirectory as NSString).appendingPathComponent("portcullis.sqlite") }

    var serverConfiguration: ServerConfiguration {
        var configuration = ServerConfiguration(
            baseURL: resolvedBaseURL, accessTokenLifetime: accessTokenLifetime, refreshTokenLifetime: refreshTokenLifetime,
            maximumBodyBytes: maximumBodyBytes, trustedProxies: trustedProxies,
            signInRetention: TimeInterval(signInRetentionDays) * 86400,
            outbox: OutboxDispatcher.Configuration(
                baseDelay: .seconds(callbackBaseDelaySeconds), maxDelay: .seconds(callbackMaxDelaySeconds), maxAttempts: callbackMaxAttempts,
                pollInterval: postgresURL == nil ? nil : .seconds(10),
                destinations: CallbackDestinations(
                    allowPrivateNetworks: callbackAllowPrivateNetworks, allowLoopback: callbackAllowLoopback,
                    trustRoots: callbackCAFile ?? legacyReceiverCAFile)),
            sweepInterval: .seconds(sweepIntervalSeconds), idleEnrollmentRetention: TimeInterval(idleEnrollmentDays) * 86400,
            tenantCacheValidation: postgresURL == nil ? .onWrite : .changeFeed(recheck: .seconds(5)),
            outboxRetention: TimeInterval(callbackRetentionDays) * 86400, maximumEnrollmentsPerAccount: maximumEnrollmentsPerAccount,
            lockout: lockout, shutdownDrain: .milliseconds(shutdownDrainMilliseconds),
            audienceFormat: audienceFormat, signIn: interactive)
        configuration.dpopNonceRequired = dpopNonceRequired
        configuration.riskDetections = riskDetections
        configuration.signInAggregationWindow = TimeInterval(signInAggregationSeconds)
        configuration.signInMaximumBytes = Int64(signInMaximumMegabytes) * 1_048_576
        configuration.continuousAccessTokenLifetime = continuousAccessTokenLifetime
        configuration.signals = SignalSettings(
            pendingPerStream: signalsPendingPerStream, longestPoll: .seconds(signalsLongestPollSeconds),
            minimumVerificationInterval: TimeInterval(signalsMinimumVerificationSeconds),
            sharedStorePollInterval: postgresURL == nil ? nil : .milliseconds(200))
        configuration.signals.receiverPollInterval = .seconds(signalsReceiverPollSeconds)
        return configuration
    }
}
