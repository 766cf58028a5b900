/*
 * jwt_verify — verify a Portcullis access token the way a C resource server
 * built on Debian's libjwt 1.10 would.
 *
 *   gcc -Wall -Wextra -o jwt_verify jwt_verify.c -ljwt
 *   ./jwt_verify TOKEN_FILE PUBKEY_PEM_FILE ALG ISSUER AUDIENCE NOW
 *
 *   TOKEN_FILE       file holding the compact JWT (surrounding whitespace ignored)
 *   PUBKEY_PEM_FILE  the signing key's public key, PEM (SubjectPublicKeyInfo)
 *   ALG              expected algorithm: ES256, ES384, ES512, RS256, RS384 or RS512
 *   ISSUER           expected "iss", compared exactly
 *   AUDIENCE         expected "aud" (a string, or one member of an array)
 *   NOW              current time, whole Unix seconds
 *
 * libjwt 1.10 checks the signature and nothing else (see QUIRKS.md):
 *   - it has no algorithm pinning: it verifies whatever "alg" the header
 *     names, so an HS256 token keyed with the public-key PEM verifies. We
 *     compare jwt_get_alg() with the expected algorithm ourselves, and refuse
 *     to be told to expect "none" or an HMAC algorithm at all.
 *   - it checks no claims: iss, aud, exp and nbf are checked here. exp is
 *     required; nbf is optional but, when present, must be <= NOW. Both must
 *     be JSON integers (a fractional NumericDate is refused, as libjwt's own
 *     integer accessor would read it as "absent").
 *
 * On success prints one line of JSON (alg, kid, typ, iss, sub, aud, exp, nbf,
 * iat and, when present, oid, tid, azp, scp, roles, xms_cc) on stdout and
 * exits 0. On failure prints "jwt_verify: <reason>" on stderr and exits 1
 * (token refused) or 2 (usage or I/O error).
 */
#include <ctype.h>
#include <errno.h>
#include <jwt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_REFUSED 1
#define EXIT_USAGE 2

static void die(int code, const char *fmt, const char *arg)
{
	fputs("jwt_verify: ", stderr);
	fprintf(stderr, fmt, arg ? arg : "");
	fputc('\n', stderr);
	exit(code);
}

/* Read a whole file; NUL-terminated; *len excludes the NUL. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die(EXIT_USAGE, "cannot open %s", path);
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (!buf)
		die(EXIT_USAGE, "out of memory%s", NULL);
	for (;;) {
		if (n + 1 >= cap) {
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (!nb)
				die(EXIT_USAGE, "out of memory%s", NULL);
			buf = nb;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f))
		die(EXIT_USAGE, "cannot read %s", path);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static char *trim(char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* Strict base-10 integer: the whole string, optional leading '-'. */
static int parse_int(const char *s, long long *out)
{
	if (!s || !*s)
		return -1;
	const char *p = s;
	if (*p == '-')
		p++;
	if (!*p)
		return -1;
	for (const char *q = p; *q; q++)
		if (!isdigit((unsigned char)*q))
			return -1;
	errno = 0;
	char *end = NULL;
	long long v = strtoll(s, &end, 10);
	if (errno || !end || *end)
		return -1;
	*out = v;
	return 0;
}

/* ---- a minimal reader for JSON string values (what jansson hands back) ---- */

static void put_utf8(char **o, unsigned long cp)
{
	char *p = *o;
	if (cp < 0x80) {
		*p++ = (char)cp;
	} else if (cp < 0x800) {
		*p++ = (char)(0xC0 | (cp >> 6));
		*p++ = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*p++ = (char)(0xE0 | (cp >> 12));
		*p++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*p++ = (char)(0x80 | (cp & 0x3F));
	} else {
		*p++ = (char)(0xF0 | (cp >> 18));
		*p++ = (char)(0x80 | ((cp >> 12) & 0x3F));
		*p++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*p++ = (char)(0x80 | (cp & 0x3F));
	}
	*o = p;
}

static int hex4(const char *s, unsigned long *out)
{
	unsigned long v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9') v |= (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f') v |= (unsigned long)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F') v |= (unsigned long)(c - 'A' + 10);
		else return -1;
	}
	*out = v;
	return 0;
}

/*
 * Parse one JSON string starting at *pp (which must point at '"'); returns a
 * malloc'd decoded copy and advances *pp past the closing quote, or NULL.
 */
static char *json_string(const char **pp)
{
	const char *p = *pp;
	if (*p != '"')
		return NULL;
	p++;
	char *out = malloc(strlen(p) * 4 + 1), *o = out;
	if (!out)
		return NULL;
	while (*p && *p != '"') {
		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		p++;
		switch (*p) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned long cp, lo;
			if (hex4(p + 1, &cp)) goto bad;
			p += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (p[1] != '\\' || p[2] != 'u' || hex4(p + 3, &lo) ||
				    lo < 0xDC00 || lo > 0xDFFF)
					goto bad;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				p += 6;
			} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
				goto bad;
			}
			if (cp == 0) goto bad; /* no NULs inside C strings */
			put_utf8(&o, cp);
			break;
		}
		default:
			goto bad;
		}
		p++;
	}
	if (*p != '"')
		goto bad;
	*o = '\0';
	*pp = p + 1;
	return out;
bad:
	free(out);
	return NULL;
}

static const char *skip_ws(const char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

/*
 * Does the JSON value `json` (a string or an array of strings) contain
 * `want`? Returns 1 yes, 0 no, -1 if the value has another shape.
 */
static int json_contains_string(const char *json, const char *want)
{
	const char *p = skip_ws(json);
	if (*p == '"') {
		char *s = json_string(&p);
		if (!s || *skip_ws(p))
			return free(s), -1;
		int hit = strcmp(s, want) == 0;
		free(s);
		return hit;
	}
	if (*p != '[')
		return -1;
	p = skip_ws(p + 1);
	int hit = 0;
	if (*p == ']')
		return *skip_ws(p + 1) ? -1 : 0;
	for (;;) {
		char *s = json_string(&p);
		if (!s)
			return -1;
		if (strcmp(s, want) == 0)
			hit = 1;
		free(s);
		p = skip_ws(p);
		if (*p == ',') {
			p = skip_ws(p + 1);
			continue;
		}
		if (*p == ']')
			break;
		return -1;
	}
	return *skip_ws(p + 1) ? -1 : hit;
}

/* ---- claims ---- */

/* The claim as JSON text (malloc'd by jansson), or NULL when absent. */
static char *claim_json(jwt_t *jwt, const char *name)
{
	return jwt_get_grants_json(jwt, name);
}

/* An integer NumericDate claim. 1 = present and valid, 0 = absent, -1 = not an integer. */
static int claim_time(jwt_t *jwt, const char *name, long long *out)
{
	char *j = claim_json(jwt, name);
	if (!j)
		return 0;
	int rc = parse_int(trim(j), out) == 0 ? 1 : -1;
	free(j);
	return rc;
}

static const char *alg_name(jwt_alg_t alg)
{
	switch (alg) {
	case JWT_ALG_NONE: return "none";
	case JWT_ALG_HS256: return "HS256";
	case JWT_ALG_HS384: return "HS384";
	case JWT_ALG_HS512: return "HS512";
	case JWT_ALG_RS256: return "RS256";
	case JWT_ALG_RS384: return "RS384";
	case JWT_ALG_RS512: return "RS512";
	case JWT_ALG_ES256: return "ES256";
	case JWT_ALG_ES384: return "ES384";
	case JWT_ALG_ES512: return "ES512";
	default: return "invalid";
	}
}

/* Append `"name":<json>` to the summary when the claim/header is present. */
static void summary_add(FILE *out, int *first, const char *name, char *json)
{
	if (!json)
		return;
	fprintf(out, "%s\"%s\":%s", *first ? "" : ",", name, json);
	*first = 0;
	free(json);
}

static char *quoted(const char *s)
{
	/* Only used for values we produced or libjwt validated as JSON strings
	 * (alg names, header strings); escape what JSON requires anyway. */
	size_t n = strlen(s);
	char *q = malloc(n * 6 + 3), *o = q;
	if (!q)
		return NULL;
	*o++ = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			*o++ = '\\';
			*o++ = (char)*p;
		} else if (*p < 0x20) {
			o += sprintf(o, "\\u%04x", *p);
		} else {
			*o++ = (char)*p;
		}
	}
	*o++ = '"';
	*o = '\0';
	return q;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr,
			"usage: %s TOKEN_FILE PUBKEY_PEM_FILE ALG ISSUER AUDIENCE NOW\n",
			argc > 0 ? argv[0] : "jwt_verify");
		return EXIT_USAGE;
	}
	const char *token_path = argv[1], *key_path = argv[2];
	const char *want_alg_s = argv[3], *want_iss = argv[4], *want_aud = argv[5];
	long long now;
	if (parse_int(argv[6], &now) || now < 0)
		die(EXIT_USAGE, "NOW must be whole Unix seconds, got '%s'", argv[6]);

	jwt_alg_t want_alg = jwt_str_alg(want_alg_s);
	switch (want_alg) {
	case JWT_ALG_RS256: case JWT_ALG_RS384: case JWT_ALG_RS512:
	case JWT_ALG_ES256: case JWT_ALG_ES384: case JWT_ALG_ES512:
		break;
	default:
		/* "none", HS* (a public key is not an HMAC secret) and unknown names. */
		die(EXIT_USAGE, "expected algorithm must be an asymmetric one (ES256, RS256, ...), got '%s'",
		    want_alg_s);
	}

	char *token_buf = read_file(token_path, NULL);
	char *token = trim(token_buf);
	if (!*token)
		die(EXIT_REFUSED, "token file %s is empty", token_path);
	size_t key_len = 0;
	char *key = read_file(key_path, &key_len);
	if (!strstr(key, "-----BEGIN PUBLIC KEY-----") &&
	    !strstr(key, "-----BEGIN RSA PUBLIC KEY-----"))
		die(EXIT_USAGE, "%s does not hold a PEM public key", key_path);

	/* Cheap shape check before libjwt: three dot-separated parts, non-empty signature. */
	const char *d1 = strchr(token, '.');
	const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	if (!d1 || !d2 || strchr(d2 + 1, '.'))
		die(EXIT_REFUSED, "token is not a compact JWS (header.payload.signature)%s", NULL);
	if (d2[1] == '\0')
		die(EXIT_REFUSED, "token has no signature (unsecured JWT / alg none)%s", NULL);

	jwt_t *jwt = NULL;
	int rc = jwt_decode(&jwt, token, (const unsigned char *)key, (int)key_len);
	if (rc != 0 || !jwt) {
		char why[128];
		snprintf(why, sizeof why, "%s (errno %d)", strerror(rc), rc);
		die(EXIT_REFUSED, "jwt_decode failed: bad signature, wrong key, malformed token, "
		    "or a header typ other than JWT (libjwt 1.10 refuses at+jwt): %s", why);
	}

	/* libjwt 1.10 verifies with whatever alg the header names: pin it. */
	jwt_alg_t got_alg = jwt_get_alg(jwt);
	if (got_alg != want_alg) {
		char why[96];
		snprintf(why, sizeof why, "header alg %s, expected %s", alg_name(got_alg), alg_name(want_alg));
		die(EXIT_REFUSED, "algorithm mismatch: %s", why);
	}

	/* iss: exact string match. */
	const char *iss = jwt_get_grant(jwt, "iss");
	if (!iss)
		die(EXIT_REFUSED, "token has no string 'iss' claim%s", NULL);
	if (strcmp(iss, want_iss) != 0)
		die(EXIT_REFUSED, "issuer mismatch: token iss is '%s'", iss);

	/* aud: a string or an array of strings containing the expected audience. */
	char *aud_json = claim_json(jwt, "aud");
	if (!aud_json)
		die(EXIT_REFUSED, "token has no 'aud' claim%s", NULL);
	int aud_ok = json_contains_string(aud_json, want_aud);
	if (aud_ok < 0)
		die(EXIT_REFUSED, "'aud' is neither a string nor an array of strings: %s", aud_json);
	if (aud_ok == 0)
		die(EXIT_REFUSED, "audience mismatch: token aud is %s", aud_json);
	free(aud_json);

	/* exp (required) > now >= nbf (when present). */
	long long exp = 0, nbf = 0;
	int has = claim_time(jwt, "exp", &exp);
	if (has == 0)
		die(EXIT_REFUSED, "token has no 'exp' claim%s", NULL);
	if (has < 0)
		die(EXIT_REFUSED, "'exp' is not an integer NumericDate (fractional seconds?)%s", NULL);
	if (!(exp > now)) {
		char why[96];
		snprintf(why, sizeof why, "exp %lld <= now %lld", exp, now);
		die(EXIT_REFUSED, "token expired: %s", why);
	}
	has = claim_time(jwt, "nbf", &nbf);
	if (has < 0)
		die(EXIT_REFUSED, "'nbf' is not an integer NumericDate (fractional seconds?)%s", NULL);
	if (has > 0 && now < nbf) {
		char why[96];
		snprintf(why, sizeof why, "nbf %lld > now %lld", nbf, now);
		die(EXIT_REFUSED, "token not yet valid: %s", why);
	}
	long long iat = 0;
	if (claim_time(jwt, "iat", &iat) < 0)
		die(EXIT_REFUSED, "'iat' is not an integer NumericDate (fractional seconds?)%s", NULL);

	/* Success: one line of JSON. */
	int first = 1;
	fputc('{', stdout);
	summary_add(stdout, &first, "alg", quoted(alg_name(got_alg)));
	const char *kid = jwt_get_header(jwt, "kid");
	if (kid)
		summary_add(stdout, &first, "kid", quoted(kid));
	const char *typ = jwt_get_header(jwt, "typ");
	if (typ)
		summary_add(stdout, &first, "typ", quoted(typ));
	static const char *const names[] = {
		"iss", "sub", "aud", "exp", "nbf", "iat", "oid", "tid", "azp",
		"scp", "roles", "upn", "preferred_username", "xms_cc", "jti",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		summary_add(stdout, &first, names[i], claim_json(jwt, names[i]));
	fputs("}\n", stdout);

	jwt_free(jwt);
	free(key);
	free(token_buf);
	return fflush(stdout) == 0 ? 0 : EXIT_USAGE;
}
