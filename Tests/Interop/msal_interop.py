#!/usr/bin/env python3
"""MSAL for Python against a running Portcullis (Microsoft identity platform dialect).

Run by scripts/msal-interop inside a loopback-only network namespace, where
Portcullis serves TLS on port 443 with a `portcullis dev-cert` certificate:
MSAL accepts only https authorities, and its password grant calls user-realm
discovery on port 443 of the authority host whatever port the authority names.

    python3 msal_interop.py --cafile KEYS/dev-cert.pem [--base-url https://localhost]

Tests
  (a) ConfidentialClientApplication, client_credentials, client_capabilities=["protapp"]:
      an access token for api://contoso-mail/.default whose aud, roles/azp and xms_cc are right.
  (b) PublicClientApplication, password grant for alice with client_capabilities=["protapp"]:
      access token, id_token_claims, a refresh token in MSAL's cache; then
      acquire_token_silent(force_refresh=True), which redeems the refresh token.

Exits 0 when every check passed, 1 on the first failure (with a message saying
what was expected and what came back), 2 on a usage error.
"""
import argparse
import base64
import json
import sys
import traceback
import warnings

TENANT_DOMAIN = "contoso.example"
TENANT_ID = "7e1b0c54-2f6a-4c1e-9d3b-5a8f0e2c4b71"
PUBLIC_CLIENT = "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"
DAEMON_CLIENT = "c0ffee00-2222-4a2b-8c3d-4e5f6a7b8c02"
DAEMON_SECRET = "daemon-dev-secret-change-me"
RESOURCE = "api://contoso-mail"
# Access tokens name the resource by its application ID, as Entra v2.0 tokens do (PROTOCOL §2.3).
RESOURCE_APP_ID = "c0ffee00-4444-4a2b-8c3d-4e5f6a7b8c04"
USERNAME = "alice@contoso.example"
PASSWORD = "Alice-dev-pass1"
USER_OID = "0c9e3a1f-5b7d-4e2a-8c6f-1d3b5a7e9f01"


class Failure(Exception):
    pass


def check(cond, what, got=None):
    if not cond:
        raise Failure(what + ("" if got is None else f"\n    got: {_short(got)}"))


def _short(value, limit=1500):
    text = value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "…"


def jwt_claims(token):
    """Decode a JWT's payload without verifying it (MSAL does not verify either)."""
    parts = token.split(".")
    check(len(parts) == 3, "access token is not a compact JWS (three dot-separated parts)", token)
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    return json.loads(base64.urlsafe_b64decode(payload))


def jwt_header(token):
    part = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def as_list(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def expect_token(result, what):
    check(isinstance(result, dict), f"{what}: MSAL returned {type(result).__name__}, not a dict", result)
    check("access_token" in result,
          f"{what}: no access_token (MSAL returns the server's error body as the result dict)",
          {k: v for k, v in result.items() if k not in ("refresh_token", "id_token")})


def check_xms_cc(claims, what):
    cc = [str(v).lower() for v in as_list(claims.get("xms_cc"))]
    check("protapp" in cc, f"{what}: access token xms_cc should contain 'protapp'", claims.get("xms_cc"))


def check_times(claims, what):
    for name in ("iat", "nbf", "exp"):
        check(isinstance(claims.get(name), int),
              f"{what}: '{name}' must be a whole-second integer NumericDate", claims.get(name))
    check(claims["nbf"] <= claims["iat"] < claims["exp"], f"{what}: expected nbf <= iat < exp", claims)


def make_session(cafile):
    import requests
    session = requests.Session()
    # REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE in the environment would override `verify`
    # (QUIRKS.md): ignore the environment altogether (also proxies; there is no network).
    session.trust_env = False
    session.verify = cafile
    return session


def test_client_credentials(msal, authority, issuer, session):
    what = "(a) client_credentials"
    app = msal.ConfidentialClientApplication(
        DAEMON_CLIENT,
        client_credential=DAEMON_SECRET,
        authority=authority,
        client_capabilities=["protapp"],
        instance_discovery=False,
        http_client=session,
    )
    scopes = [f"{RESOURCE}/.default"]
    result = app.acquire_token_for_client(scopes=scopes)
    expect_token(result, what)
    check(str(result.get("token_type", "")).lower() == "bearer", f"{what}: token_type should be Bearer",
          result.get("token_type"))
    header = jwt_header(result["access_token"])
    claims = jwt_claims(result["access_token"])
    check(header.get("alg") in ("ES256", "RS256") and header.get("kid"),
          f"{what}: access token header should carry alg ES256/RS256 and a kid", header)
    check(claims.get("aud") == RESOURCE_APP_ID,
          f"{what}: aud should be the resource's application ID {RESOURCE_APP_ID}", claims.get("aud"))
    check(claims.get("iss") == issuer, f"{what}: iss should be {issuer}", claims.get("iss"))
    check(claims.get("tid") == TENANT_ID, f"{what}: tid should be {TENANT_ID}", claims.get("tid"))
    check("Mail.ReadAll" in as_list(claims.get("roles")) or claims.get("azp") == DAEMON_CLIENT,
          f"{what}: expected roles to contain Mail.ReadAll or azp == {DAEMON_CLIENT}", claims)
    check_xms_cc(claims, what)
    check_times(claims, what)
    print(f"PASS {what}: access token aud={claims.get('aud')} roles={claims.get('roles')} "
          f"azp={claims.get('azp')} xms_cc={claims.get('xms_cc')} alg={header.get('alg')}")

    again = app.acquire_token_for_client(scopes=scopes)
    expect_token(again, f"{what} (second call)")
    check(again.get("token_source") == "cache",
          f"{what}: a second call should be served from MSAL's token cache", again.get("token_source"))
    print(f"PASS {what}: second call served from MSAL's cache")


def test_password_and_refresh(msal, authority, issuer, session):
    what = "(b) password"
    app = msal.PublicClientApplication(
        PUBLIC_CLIENT,
        authority=authority,
        client_capabilities=["protapp"],
        instance_discovery=False,
        http_client=session,
    )
    scopes = [f"{RESOURCE}/Mail.Read"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # ROPC is deprecated for public clients
        result = app.acquire_token_by_username_password(USERNAME, PASSWORD, scopes=scopes)
    expect_token(result, what)
    claims = jwt_claims(result["access_token"])
    check(claims.get("aud") == RESOURCE_APP_ID,
          f"{what}: aud should be the resource's application ID {RESOURCE_APP_ID}", claims.get("aud"))
    check(claims.get("iss") == issuer, f"{what}: iss should be {issuer}", claims.get("iss"))
    check("Mail.Read" in str(claims.get("scp", "")).split(), f"{what}: scp should contain Mail.Read",
          claims.get("scp"))
    check(claims.get("azp") == PUBLIC_CLIENT, f"{what}: azp should be {PUBLIC_CLIENT}", claims.get("azp"))
    check(claims.get("oid") == USER_OID, f"{what}: oid should be alice's object ID {USER_OID}", claims.get("oid"))
    check_xms_cc(claims, what)
    check_times(claims, what)

    idc = result.get("id_token_claims")
    check(isinstance(idc, dict) and idc, f"{what}: no id_token_claims (MSAL adds openid/profile/offline_access "
          "and expects an id_token back)", {k: v for k, v in result.items() if k != "access_token"})
    check(idc.get("aud") == PUBLIC_CLIENT, f"{what}: id token aud should be the client ID", idc.get("aud"))
    check(idc.get("iss") == issuer, f"{what}: id token iss should be {issuer}", idc.get("iss"))
    check(idc.get("tid") == TENANT_ID and idc.get("oid") == USER_OID,
          f"{what}: id token should carry tid/oid", idc)
    check(str(idc.get("preferred_username", "")).lower() == USERNAME,
          f"{what}: id token preferred_username should be {USERNAME}", idc.get("preferred_username"))
    check(result.get("refresh_token"), f"{what}: no refresh_token in the response (offline_access)",
          sorted(result))

    rts = app.token_cache.find(msal.TokenCache.CredentialType.REFRESH_TOKEN)
    check(len(rts) >= 1, f"{what}: MSAL's cache holds no refresh token", rts)
    accounts = app.get_accounts(username=USERNAME)
    check(len(accounts) == 1, f"{what}: MSAL's cache should hold exactly one account for {USERNAME} "
          "(built from client_info + id_token)", app.get_accounts())
    account = accounts[0]
    check(account.get("home_account_id") == f"{USER_OID}.{TENANT_ID}",
          f"{what}: home_account_id should be <oid>.<tid> (from client_info)", account)
    print(f"PASS {what}: access token scp={claims.get('scp')!r} xms_cc={claims.get('xms_cc')}; "
          f"id_token for {idc.get('preferred_username')}; refresh token cached; "
          f"account {account.get('home_account_id')} env={account.get('environment')}")

    what = "(b) refresh_token"
    old_rt = rts[0]["secret"]
    old_jti = claims.get("jti")
    silent = app.acquire_token_silent(scopes, account=account, force_refresh=True)
    check(silent is not None, f"{what}: acquire_token_silent(force_refresh=True) returned None: MSAL found no "
          "usable refresh token for the account (cache environment/home_account_id mismatch?)")
    expect_token(silent, what)
    check(silent.get("token_source") == "identity_provider",
          f"{what}: the token should come from the server, not the cache", silent.get("token_source"))
    claims2 = jwt_claims(silent["access_token"])
    check(claims2.get("jti") != old_jti, f"{what}: expected a new access token", claims2.get("jti"))
    check(claims2.get("oid") == USER_OID, f"{what}: oid should be {USER_OID}", claims2.get("oid"))
    check("Mail.Read" in str(claims2.get("scp", "")).split(), f"{what}: scp should contain Mail.Read",
          claims2.get("scp"))
    check_xms_cc(claims2, what)  # capabilities are re-read on refresh_token grants
    new_rts = [rt["secret"] for rt in app.token_cache.find(msal.TokenCache.CredentialType.REFRESH_TOKEN)]
    check(new_rts and old_rt not in new_rts,
          f"{what}: the refresh token should have been rotated in MSAL's cache", len(new_rts))
    print(f"PASS {what}: acquire_token_silent(force_refresh=True) redeemed the refresh token; "
          f"new access token xms_cc={claims2.get('xms_cc')}; refresh token rotated")

    # Presenting the rotated refresh token again must fail, and revoke its whole
    # family (PROTOCOL.md 2.3), so the current one stops working too. MSAL never
    # resends a rotated token, so post the form directly to the token endpoint.
    what = "(b) rotated refresh token"
    current_rt = new_rts[0]

    def redeem(rt):
        response = session.post(app.authority.token_endpoint, data={
            "grant_type": "refresh_token", "client_id": PUBLIC_CLIENT, "refresh_token": rt,
            "scope": " ".join(scopes + ["offline_access"])}, timeout=30)
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, response.text

    status, body = redeem(old_rt)
    check(status == 400 and isinstance(body, dict) and body.get("error") == "invalid_grant",
          f"{what}: presenting the rotated refresh token again should be 400 invalid_grant", [status, body])
    status2, body2 = redeem(current_rt)
    check(status2 == 400 and isinstance(body2, dict) and body2.get("error") == "invalid_grant",
          f"{what}: after a replay the family is revoked, so the current refresh token should be refused too",
          [status2, body2])
    print(f"PASS {what}: replay refused ({body.get('error')} {body.get('error_codes')}); "
          f"family revoked ({body2.get('error')} {body2.get('error_codes')})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cafile", required=True, help="PEM certificate to trust (portcullis dev-cert output)")
    parser.add_argument("--base-url", default="https://localhost", help="the server's public https base URL")
    parser.add_argument("--tenant", default=TENANT_DOMAIN, help="tenant domain or ID in the authority")
    args = parser.parse_args()
    if not args.base_url.startswith("https://"):
        print("msal_interop: --base-url must be https (MSAL refuses other authorities)", file=sys.stderr)
        return 2
    try:
        import msal
        import requests  # noqa: F401  (an msal dependency)
    except ImportError as error:
        print(f"msal_interop: {error}; install with: python3 -m pip install msal", file=sys.stderr)
        return 2

    base = args.base_url.rstrip("/")
    authority = f"{base}/{args.tenant}"
    issuer = f"{base}/{TENANT_ID}/v2.0"
    print(f"msal {msal.__version__}; authority {authority}; expected issuer {issuer}")
    session = make_session(args.cafile)
    failures = 0
    for test in (test_client_credentials, test_password_and_refresh):
        try:
            test(msal, authority, issuer, session)
        except Failure as failure:
            failures += 1
            print(f"FAIL {failure}", file=sys.stderr)
        except Exception:  # MSAL raises for transport/discovery problems (e.g. in the constructor)
            failures += 1
            print(f"FAIL {test.__name__}: MSAL raised:\n{traceback.format_exc()}", file=sys.stderr)
    if failures:
        print(f"msal_interop: {failures} test group(s) failed", file=sys.stderr)
        return 1
    print("msal_interop: all MSAL interop checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
