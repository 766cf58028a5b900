/// The schema, as numbered migrations. Never edit a released migration; append a new one.
enum SQLiteMigrations {
    static let all: [(version: Int, statements: [String])] = [
        (
            1,
            [
                """
                CREATE TABLE documents (
                    tenant_id TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL,
                    body TEXT NOT NULL, version INTEGER NOT NULL, updated_at REAL NOT NULL,
                    PRIMARY KEY (tenant_id, kind, id)
                )
                """,
                "CREATE TABLE revision (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL)",
                "INSERT INTO revision (id, value) VALUES (1, 0)",
                """
                CREATE TABLE audit_log (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, tenant_id TEXT NOT NULL, at REAL NOT NULL,
                    actor TEXT NOT NULL, action TEXT NOT NULL, kind TEXT NOT NULL, document_id TEXT NOT NULL,
                    before TEXT, after TEXT
                )
                """,
                "CREATE INDEX audit_log_tenant ON audit_log (tenant_id, id)",
                """
                CREATE TABLE refresh_token_families (
                    family_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, client_id TEXT NOT NULL,
                    created_at REAL NOT NULL, revoked_at REAL
                )
                """,
                "CREATE INDEX refresh_token_families_account ON refresh_token_families (tenant_id, user_id, client_id)",
                """
                CREATE TABLE refresh_tokens (
                    token_hash TEXT PRIMARY KEY,
                    family_id TEXT NOT NULL REFERENCES refresh_token_families (family_id) ON DELETE CASCADE,
                    tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, client_id TEXT NOT NULL, scope TEXT NOT NULL,
                    issued_at REAL NOT NULL, expires_at REAL NOT NULL, used_at REAL
                )
                """,
                "CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id)",
                "CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at)",
                "CREATE TABLE revoked_access_tokens (jti TEXT PRIMARY KEY, expires_at REAL NOT NULL)",
            ]
        ),
        (
            2,
            [
                """
                CREATE TABLE sign_ins (
                    cursor INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, tenant_id TEXT NOT NULL, created_at REAL NOT NULL,
                    correlation_id TEXT NOT NULL, user_id TEXT, client_app_id TEXT NOT NULL, resource_app_id TEXT NOT NULL,
                    status TEXT NOT NULL, record TEXT NOT NULL
                )
                """,
                "CREATE INDEX sign_ins_tenant ON sign_ins (tenant_id, cursor)",
                "CREATE INDEX sign_ins_created ON sign_ins (created_at)",
                "CREATE INDEX sign_ins_correlation ON sign_ins (correlation_id)",
                """
                CREATE TABLE sign_in_policies (
                    cursor INTEGER NOT NULL REFERENCES sign_ins (cursor) ON DELETE CASCADE, policy_id TEXT NOT NULL,
                    PRIMARY KEY (policy_id, cursor)
                )
                """,
            ]
        ),
        (
            3,
            [
                """
                CREATE TABLE enrollments (
                    id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, client_id TEXT NOT NULL, device_id TEXT NOT NULL,
                    state TEXT NOT NULL, lapses_at REAL, updated_at REAL NOT NULL, revision INTEGER NOT NULL, document TEXT NOT NULL
                )
                """,
                // The single-managed-account rule, enforced by the database: one active enrollment per app instance.
                "CREATE UNIQUE INDEX enrollments_one_managed_account ON enrollments (tenant_id, client_id, device_id) WHERE state <> 'unenrolled'",
                "CREATE INDEX enrollments_account ON enrollments (tenant_id, user_id, client_id)",
                "CREATE INDEX enrollments_lapse ON enrollments (lapses_at) WHERE state = 'compliant'",
                "CREATE INDEX enrollments_updated ON enrollments (updated_at)",
                """
                CREATE TABLE enrollment_history (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, enrollment_id TEXT NOT NULL, at REAL NOT NULL, event TEXT NOT NULL,
                    from_status TEXT, to_status TEXT, detail TEXT
                )
                """,
                "CREATE INDEX enrollment_history_enrollment ON enrollment_history (enrollment_id, seq)",
                """
                CREATE TABLE outbox (
                    id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, enrollment_id TEXT, target_uri TEXT NOT NULL, payload TEXT NOT NULL,
                    jti TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL, next_attempt_at REAL NOT NULL,
                    lease_until REAL, lease_owner TEXT, last_error TEXT, created_at REAL NOT NULL, delivered_at REAL
                )
                """,
                "CREATE INDEX outbox_due ON outbox (state, next_attempt_at)",
                "CREATE INDEX outbox_tenant ON outbox (tenant_id, created_at)",
            ]
        ),
        (
            4,
            [
                """
                CREATE TABLE auth_throttles (
                    key TEXT PRIMARY KEY, failures INTEGER NOT NULL, window_start REAL NOT NULL, locks INTEGER NOT NULL,
                    locked_until REAL, expires_at REAL NOT NULL
                )
                """,
                "CREATE INDEX auth_throttles_expiry ON auth_throttles (expires_at)",
            ]
        ),
        (
            5,
            [
                // Interactive sign-in (PROTOCOL §9): sessions, authorization codes, device codes, and how a
                // refresh-token family's user authenticated.
                """
                CREATE TABLE sessions (
                    id_hash TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, methods TEXT NOT NULL, auth_time REAL NOT NULL,
                    created_at REAL NOT NULL, last_seen_at REAL NOT NULL, expires_at REAL NOT NULL
                )
                """,
                "CREATE INDEX sessions_user ON sessions (tenant_id, user_id)",
                "CREATE INDEX sessions_expiry ON sessions (expires_at)",
                """
                CREATE TABLE authorization_codes (
                    code_hash TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, request TEXT NOT NULL, methods TEXT NOT NULL,
                    auth_time REAL NOT NULL, expires_at REAL NOT NULL, used_at REAL, family_id TEXT, access_jti TEXT, access_expires_at REAL
                )
                """,
                "CREATE INDEX authorization_codes_expiry ON authorization_codes (expires_at)",
                """
                CREATE TABLE device_codes (
                    device_code_hash TEXT PRIMARY KEY, user_code TEXT NOT NULL UNIQUE, tenant_id TEXT NOT NULL, client_id TEXT NOT NULL,
                    scope TEXT NOT NULL, claims TEXT, interval_seconds INTEGER NOT NULL, expires_at REAL NOT NULL, last_polled_at REAL,
                    state TEXT NOT NULL, user_id TEXT, methods TEXT, auth_time REAL
                )
                """,
                "CREATE INDEX device_codes_expiry ON device_codes (expires_at)",
                "CREATE INDEX device_codes_pending ON device_codes (tenant_id, state)",
                "ALTER TABLE refresh_token_families ADD COLUMN methods TEXT",
                "ALTER TABLE refresh_token_families ADD COLUMN auth_time REAL",
            ]
        ),
        (
            6,
            [
                // Second factors (PROTOCOL §10): one per kind per user; the secret sealed (FactorSecretBox).
                """
                CREATE TABLE authentication_methods (
                    id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, kind TEXT NOT NULL, sealed_secret TEXT NOT NULL,
                    created_at REAL NOT NULL, last_used_step INTEGER, last_used_at REAL,
                    UNIQUE (tenant_id, user_id, kind)
                )
                """
            ]
        ),
        (
            7,
            [
                // Object IDs and application IDs are unique across the installation (PROTOCOL §11; checked by the writer
                // first, this is the backstop). Existing stores are checked before this runs (`installationIdentifierConflicts`).
                """
                CREATE UNIQUE INDEX documents_installation_ids ON documents ((CASE kind WHEN 'application' THEN 'application' ELSE 'directoryObject' END), id)
                WHERE kind IN ('user', 'group', 'application')
                """,
                // Device codes remember the address that asked (per-address quotas, PROTOCOL §9.5).
                "ALTER TABLE device_codes ADD COLUMN client_address TEXT",
                "CREATE INDEX device_codes_pending_client ON device_codes (tenant_id, client_id, state)",
                "CREATE INDEX device_codes_pending_address ON device_codes (client_address, state)",
            ]
        ),
        (
            8,
            [
                // Each tenant's revision (the store-wide revision of its last change), so that a cache follows one tenant's
                // change without rebuilding the others (issue 26).
                "CREATE TABLE tenant_revisions (tenant_id TEXT PRIMARY KEY, revision BIGINT NOT NULL)",
                "INSERT INTO tenant_revisions (tenant_id, revision) SELECT tenant_id, MAX(version) FROM documents GROUP BY tenant_id",
            ]
        ),
        (
            9,
            [
                // Passkeys (PROTOCOL §12.1): a credential ID is registered once in the installation; base64 text like the
                // factor secrets.
                """
                CREATE TABLE passkeys (
                    id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, credential_id TEXT NOT NULL UNIQUE,
                    public_key TEXT NOT NULL, algorithm INTEGER NOT NULL, sign_count INTEGER NOT NULL, aaguid TEXT NOT NULL,
                    backup_eligible INTEGER NOT NULL, backed_up INTEGER NOT NULL, attestation TEXT NOT NULL, transports TEXT NOT NULL,
                    display_name TEXT NOT NULL, created_at REAL NOT NULL, last_used_at REAL, suspect_since REAL
                )
                """,
                "CREATE INDEX passkeys_user ON passkeys (tenant_id, user_id)",
            ]
        ),
        (
            10,
            [
                // Temporary access passes (PROTOCOL §12.3): at most one per user, stored as a keyed hash.
                """
                CREATE TABLE temporary_access_passes (
                    id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, pass_hash TEXT NOT NULL, created_at REAL NOT NULL,
                    start_at REAL NOT NULL, lifetime_minutes INTEGER NOT NULL, usable_once INTEGER NOT NULL, used_at REAL,
                    UNIQUE (tenant_id, user_id)
                )
                """
            ]
        ),
        (
            11,
            [
                // DPoP (PROTOCOL §15): the replay cache of proofs, and the key a public client's refresh-token family is bound to.
                "CREATE TABLE dpop_proofs (proof_key TEXT PRIMARY KEY, expires_at REAL NOT NULL) WITHOUT ROWID",
                "CREATE INDEX dpop_proofs_expiry ON dpop_proofs (expires_at)",
                "ALTER TABLE refresh_token_families ADD COLUMN dpop_jkt TEXT",
            ]
        ),
        (
            12,
            [
                // Shared Signals streams (PROTOCOL §14.2): a stream's SETs are found by their outbox target.
                "CREATE INDEX outbox_target ON outbox (target_uri, state)"
            ]
        ),
        (
            13,
            [
                // The sign-in log a busy tenant can keep (issue 32): aggregates of non-interactive sign-ins (a count, the last
                // one's time and correlation ID, found again by tenant, key and window), compact records, and the log's size
                // counted for retention by size. Existing records keep their whole text and read as before.
                "ALTER TABLE sign_ins ADD COLUMN count INTEGER",
                "ALTER TABLE sign_ins ADD COLUMN last_at REAL",
                "ALTER TABLE sign_ins ADD COLUMN last_correlation_id TEXT",
                "ALTER TABLE sign_ins ADD COLUMN aggregate_key TEXT",
                "ALTER TABLE sign_ins ADD COLUMN window_start REAL",
                "ALTER TABLE sign_ins ADD COLUMN size INTEGER NOT NULL DEFAULT 0",
                "UPDATE sign_ins SET size = LENGTH(CAST(record AS BLOB)) + 220",
                "CREATE UNIQUE INDEX sign_ins_aggregate ON sign_ins (tenant_id, aggregate_key, window_start) WHERE aggregate_key IS NOT NULL",
                "CREATE TABLE sign_in_usage (id INTEGER PRIMARY KEY CHECK (id = 1), bytes INTEGER NOT NULL)",
                "INSERT INTO sign_in_usage (id, bytes) SELECT 1, COALESCE(SUM(size), 0) FROM sign_ins",
                // A code issued from a session without the user taking part (single sign-on) is a non-interactive sign-in.
                "ALTER TABLE authorization_codes ADD COLUMN silent INTEGER NOT NULL DEFAULT 0",
            ]
        ),
        (
            14,
            [
                // Revocation that holds (PROTOCOL §14.1): a family that began with a device code stays one (protocol tracking);
                // per-user "void before" times, in milliseconds, honoured by Portcullis's own APIs and /introspect; the
                // conditional-access replays enqueued with the changes that need them, one per policy at most.
                "ALTER TABLE refresh_token_families ADD COLUMN transfer_method TEXT",
                """
                CREATE TABLE access_voids (
                    tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, void_before_ms INTEGER NOT NULL, expires_at REAL NOT NULL,
                    PRIMARY KEY (tenant_id, user_id)
                ) WITHOUT ROWID
                """,
                "CREATE INDEX access_voids_expiry ON access_voids (expires_at)",
                """
                CREATE TABLE policy_replays (
                    tenant_id TEXT NOT NULL, policy_id TEXT NOT NULL, before TEXT, revision INTEGER NOT NULL, generation INTEGER NOT NULL DEFAULT 0,
                    enqueued_at REAL NOT NULL, next_attempt_at REAL NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, lease_owner TEXT, lease_until REAL,
                    PRIMARY KEY (tenant_id, policy_id)
                )
                """,
                "CREATE INDEX policy_replays_due ON policy_replays (next_attempt_at)",
            ]
        ),
        (
            15,
            [
                // Devices (PROTOCOL §18): the device a family's sign-in proved (its object ID and certificate thumbprint); a refresh
                // that proves none itself is from that device, as the directory has it then, and the device's loss of
                // compliance ends the families granted on it (found by the index).
                "ALTER TABLE refresh_token_families ADD COLUMN device_id TEXT",
                "ALTER TABLE refresh_token_families ADD COLUMN device_thumbprint TEXT",
                "CREATE INDEX refresh_token_families_device ON refresh_token_families (tenant_id, device_id) WHERE device_id IS NOT NULL",
            ]
        ),
        (
            16,
            [
                // An account's enrollments in the order the token path reads the newest compliant one (`ORDER BY updated_at DESC
                // LIMIT 1`): read off the index backwards, where the index without it made SQLite build a temporary b-tree (a
                // database of its own, opened and zeroed) on every refresh.
                "DROP INDEX enrollments_account",
                "CREATE INDEX enrollments_account ON enrollments (tenant_id, user_id, client_id, updated_at)",
            ]
        ),
    ]
}
