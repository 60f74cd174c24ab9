/*
 * who-server.c: the server of test/who.sh, "who is calling". A tool, a
 * resource, a prompt, the completion and the roots callback each report
 * what their call knows of its session (mcp_call_session(3)) and of who
 * sent it (mcp_call_identity(3)). Its session hooks count the sessions
 * opened and closed and give each one data of its own, freed when it
 * ends. With WHO_JWT_KEY (a PEM public key) in the environment, its
 * authentication hook (mcp_server_set_auth(3)) takes RS256 JWTs and
 * checks them with OpenSSL: the signature, "exp", "aud" when WHO_JWT_AUD
 * is set, and the scope WHO_JWT_SCOPE (default "mcp:tools") in "scope".
 * OpenSSL is linked into this test program only, never into libmcp.
 *
 * The hooks run on the loop thread; the callbacks on workers, reading
 * the session's data (an atomic counter) and the globals below, which
 * are atomics or under their lock.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <mcp.h>

/* What a session's open hook makes, and its close hook frees. */
struct sess_data {
	int		 serial;	/* the how-manyth session opened */
	atomic_int	 calls;		/* callbacks that saw it */
};

static atomic_int	 opens;
static atomic_int	 closes;
static atomic_int	 auth_calls;

static pthread_mutex_t	 roots_lock = PTHREAD_MUTEX_INITIALIZER;
static char		*roots_seen;	/* the roots callback's report */

static EVP_PKEY		*jwt_key;
static const char	*jwt_aud;
static const char	*jwt_scope;

/* ---- what a call knows --------------------------------------------------- */

/* A copy of V (read-only, shared by the session's calls), or null. */
static json_t *
copy(const json_t *v)
{
	return v != NULL ? json_deep_copy(v) : json_null();
}

static json_t *
str(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

/* Everything CALL knows of who is calling, as JSON text (malloc'd). */
static char *
report(mcp_call *call, const char *kind)
{
	mcp_session		*sess = mcp_call_session(call);
	struct sess_data	*d = mcp_call_session_data(call);
	json_t			*o;
	char			*text;

	if (d != NULL)
		atomic_fetch_add(&d->calls, 1);
	o = json_pack("{s:s, s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o}, s:o, s:o,"
	    " s:{s:i, s:i}, s:i, s:i, s:i}",
	    "kind", kind,
	    "session",
	    "id", str(mcp_session_id(sess)),
	    "transport", str(mcp_session_transport(sess)),
	    "protocol", str(mcp_session_protocol(sess)),
	    "clientInfo", copy(mcp_session_client_info(sess)),
	    "capabilities", copy(mcp_session_client_capabilities(sess)),
	    "identity", str(mcp_session_identity(sess)),
	    "claims", copy(mcp_session_identity_claims(sess)),
	    "identity", str(mcp_call_identity(call)),
	    "claims", copy(mcp_call_identity_claims(call)),
	    "data",
	    "serial", d != NULL ? d->serial : -1,
	    "calls", d != NULL ? atomic_load(&d->calls) : -1,
	    "opens", atomic_load(&opens),
	    "closes", atomic_load(&closes),
	    "auth_calls", atomic_load(&auth_calls));
	if (o == NULL)
		return NULL;
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return text;
}

static void
whoami(mcp_call *call)
{
	char	*text = report(call, "tool");

	if (text == NULL) {
		mcp_result_error(call, "out of memory");
		return;
	}
	mcp_result_text(call, text);
	free(text);
}

static void
read_me(mcp_call *call)
{
	char	*text = report(call, "read");

	if (text == NULL) {
		mcp_result_rpc_error(call, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	mcp_result_text(call, text);
	free(text);
}

static void
prompt_who(mcp_call *call)
{
	char	*text = report(call, "prompt");

	if (text == NULL) {
		mcp_result_rpc_error(call, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	mcp_result_text(call, text);
	free(text);
}

/* The values: the whole report, as one string. */
static void
complete(mcp_call *call)
{
	char	*text = report(call, "complete");

	if (text == NULL) {
		mcp_result_rpc_error(call, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	mcp_result_completion(call, text);
	free(text);
}

static void
roots_changed(mcp_call *call)
{
	char	*text = report(call, "roots");

	pthread_mutex_lock(&roots_lock);
	free(roots_seen);
	roots_seen = text;
	pthread_mutex_unlock(&roots_lock);
}

/* What the roots callback reported last, or null. */
static void
last_roots(mcp_call *call)
{
	pthread_mutex_lock(&roots_lock);
	mcp_result_text(call, roots_seen != NULL ? roots_seen : "null");
	pthread_mutex_unlock(&roots_lock);
}

/* ---- session hooks: the loop thread --------------------------------------- */

static void *
sess_open(mcp_session *sess, void *udata)
{
	struct sess_data	*d;

	(void)udata;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	d->serial = atomic_fetch_add(&opens, 1) + 1;
	atomic_init(&d->calls, 0);
	mcp_log(MCP_LOG_INFO, "who: session %s (%s) opened, #%d",
	    mcp_session_id(sess), mcp_session_transport(sess), d->serial);
	return d;
}

static void
sess_close(mcp_session *sess, void *data, void *udata)
{
	struct sess_data	*d = data;

	(void)udata;
	atomic_fetch_add(&closes, 1);
	mcp_log(MCP_LOG_INFO, "who: session %s closed, #%d, %d calls",
	    mcp_session_id(sess), d != NULL ? d->serial : -1,
	    d != NULL ? atomic_load(&d->calls) : -1);
	free(d);
}

/* ---- the JWT hook: the loop thread -------------------------------------- */

/* base64url (no padding) of LEN bytes at S into a malloc'd buffer. */
static unsigned char *
b64url(const char *s, size_t len, size_t *outlen)
{
	unsigned char	*out;
	unsigned int	 acc = 0;
	size_t		 i, n = 0;
	int		 bits = 0, v;

	out = malloc(len * 3 / 4 + 3);
	if (out == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		char	 c = s[i];

		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '-')
			v = 62;
		else if (c == '_')
			v = 63;
		else {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (unsigned char)(acc >> bits);
		}
	}
	*outlen = n;
	return out;
}

/* base64url JSON at S (LEN bytes), parsed; NULL if either fails. */
static json_t *
b64json(const char *s, size_t len)
{
	unsigned char	*raw;
	size_t		 n;
	json_t		*v;

	raw = b64url(s, len, &n);
	if (raw == NULL)
		return NULL;
	v = json_loadb((const char *)raw, n, 0, NULL);
	free(raw);
	return v;
}

/* Is WANT among the space-separated scopes of SCOPES? */
static int
has_scope(const char *scopes, const char *want)
{
	size_t	 n = strlen(want);
	const char *p = scopes;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, want, n) == 0 && (p[n] == ' ' || p[n] == '\0'))
			return 1;
		p = strchr(p, ' ');
		if (p != NULL)
			p++;
	}
	return 0;
}

static int
aud_ok(const json_t *aud)
{
	size_t	 i;

	if (jwt_aud == NULL)
		return 1;
	if (json_is_string(aud))
		return strcmp(json_string_value(aud), jwt_aud) == 0;
	for (i = 0; i < json_array_size(aud); i++)
		if (json_is_string(json_array_get(aud, i)) &&
		    strcmp(json_string_value(json_array_get(aud, i)),
		    jwt_aud) == 0)
			return 1;
	return 0;
}

/* The signature SIG (LEN bytes) of INPUT (ILEN bytes) by the key. */
static int
signed_by_key(const char *input, size_t ilen, const unsigned char *sig,
    size_t len)
{
	EVP_MD_CTX	*ctx;
	int		 good;

	ctx = EVP_MD_CTX_new();
	if (ctx == NULL)
		return 0;
	good = EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL,
	    jwt_key) == 1 && EVP_DigestVerify(ctx, sig, len,
	    (const unsigned char *)input, ilen) == 1;
	EVP_MD_CTX_free(ctx);
	return good;
}

/*
 * header.payload.signature: the signature over "header.payload" by the
 * key (RS256 alone), a numeric "exp" in the future, the audience, a
 * "sub", and the scope (else 403, naming it).
 */
static int
check_jwt(mcp_auth *auth, const char *token, void *udata)
{
	const char	*d1, *d2, *alg, *sub, *scope;
	unsigned char	*sig = NULL;
	size_t		 siglen;
	json_t		*head = NULL, *body = NULL, *exp;
	int		 rc = MCP_AUTH_INVALID;

	(void)udata;
	atomic_fetch_add(&auth_calls, 1);
	d1 = strchr(token, '.');
	d2 = d1 != NULL ? strchr(d1 + 1, '.') : NULL;
	if (d2 == NULL || strchr(d2 + 1, '.') != NULL) {
		mcp_auth_set_error(auth, "not a JWT");
		return MCP_AUTH_INVALID;
	}
	head = b64json(token, (size_t)(d1 - token));
	body = b64json(d1 + 1, (size_t)(d2 - d1 - 1));
	sig = b64url(d2 + 1, strlen(d2 + 1), &siglen);
	alg = json_string_value(json_object_get(head, "alg"));
	if (head == NULL || body == NULL || sig == NULL) {
		mcp_auth_set_error(auth, "malformed JWT");
		goto out;
	}
	if (alg == NULL || strcmp(alg, "RS256") != 0) {
		mcp_auth_set_error(auth, "unsupported alg");
		goto out;
	}
	if (!signed_by_key(token, (size_t)(d2 - token), sig, siglen)) {
		mcp_auth_set_error(auth, "bad signature");
		goto out;
	}
	exp = json_object_get(body, "exp");
	if (!json_is_integer(exp)) {
		mcp_auth_set_error(auth, "no exp");
		goto out;
	}
	if (json_integer_value(exp) <= (json_int_t)time(NULL)) {
		mcp_auth_set_error(auth, "token expired");
		goto out;
	}
	if (!aud_ok(json_object_get(body, "aud"))) {
		mcp_auth_set_error(auth, "wrong audience");
		goto out;
	}
	sub = json_string_value(json_object_get(body, "sub"));
	if (sub == NULL) {
		mcp_auth_set_error(auth, "no sub");
		goto out;
	}
	scope = json_string_value(json_object_get(body, "scope"));
	if (scope == NULL || !has_scope(scope, jwt_scope)) {
		mcp_auth_set_scope(auth, jwt_scope);
		mcp_auth_set_error(auth, "the token lacks the scope");
		rc = MCP_AUTH_FORBIDDEN;
		goto out;
	}
	if (mcp_auth_set_subject(auth, sub) == MCP_OK &&
	    mcp_auth_set_claims_new(auth, body) == MCP_OK)
		rc = MCP_AUTH_OK;
	body = NULL;		/* stolen */
out:
	json_decref(head);
	json_decref(body);
	free(sig);
	return rc;
}

static int
load_key(const char *path)
{
	FILE	*f;

	f = fopen(path, "r");
	if (f == NULL) {
		mcp_log(MCP_LOG_ERR, "who: %s: cannot open", path);
		return -1;
	}
	jwt_key = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	if (jwt_key == NULL) {
		mcp_log(MCP_LOG_ERR, "who: %s: not a PEM public key", path);
		return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	mcp_server	*srv;
	const char	*key = getenv("WHO_JWT_KEY");
	int		 rc;

	srv = mcp_server_new("who-server", "1.0.0");
	jwt_aud = getenv("WHO_JWT_AUD");
	jwt_scope = getenv("WHO_JWT_SCOPE");
	if (jwt_scope == NULL)
		jwt_scope = "mcp:tools";
	if (key != NULL && load_key(key) != 0) {
		mcp_server_free(srv);
		return 1;
	}
	rc = mcp_tool_register(srv, "whoami", "Who is calling.", NULL,
	    whoami, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "last_roots", "What the roots "
		    "callback saw last.", NULL, last_roots, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_register(srv, "who://me", "me", "Who is "
		    "reading.", "application/json", read_me, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv, "who", "Who is asking.",
		    prompt_who, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_add_argument(srv, "who", "x", NULL, 0);
	if (rc == MCP_OK)
		rc = mcp_completion_set(srv, complete, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_on_roots_changed(srv, roots_changed, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_server_on_session(srv, sess_open, sess_close, NULL,
		    NULL);
	if (rc == MCP_OK && jwt_key != NULL)
		rc = mcp_server_set_auth(srv, check_jwt, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_main(srv, argc, argv);
	/* Every session has closed by now: the test compares the two. */
	mcp_log(MCP_LOG_NOTICE, "who: opens=%d closes=%d",
	    atomic_load(&opens), atomic_load(&closes));
	mcp_server_free(srv);
	EVP_PKEY_free(jwt_key);
	free(roots_seen);
	return rc == MCP_OK ? 0 : 1;
}
