/*
 * mcp.h: libmcp, a C framework for Model Context Protocol servers.
 *
 * This is the only installed header. Every handle is opaque, so the ABI
 * only grows: new behaviour arrives as new functions, never as a changed
 * signature. Read mcp(7) first: it explains the threads, the ownership
 * rules and the errors that every function below refers to.
 *
 * Ownership, in short (mcp(7), OWNERSHIP):
 *  - strings passed in are copied before the call returns;
 *  - a function whose name contains "_new" steals the json_t it is given,
 *    even when it fails, and accepts NULL (recorded as out of memory);
 *    every other json_t parameter is borrowed;
 *  - user data is freed through its destructor on unregister, on
 *    mcp_server_free, and when registration fails.
 */
#ifndef MCP_H
#define MCP_H

#include <stdarg.h>
#include <stddef.h>

#include <jansson.h>

struct ev_loop;

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version ---------------------------------------------------------- */

#define MCP_VERSION	"0.1.0"
#define MCP_VERSION_NUM	0x000100	/* 0xMMmmpp */

#if defined(__GNUC__) && defined(MCP_BUILDING)
#define MCP_EXTERN	__attribute__((visibility("default")))
#else
#define MCP_EXTERN
#endif

#if defined(__GNUC__)
#define MCP_WUR		__attribute__((warn_unused_result))
#define MCP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MCP_WUR
#define MCP_PRINTF(f, a)
#endif

/* The library's version: compare with MCP_VERSION_NUM to catch a header
 * and library mismatch. Any thread. */
MCP_EXTERN int		 mcp_version_num(void);
MCP_EXTERN const char	*mcp_version(void);

/* ---- Errors ----------------------------------------------------------- */

/* Library return values: MCP_OK or one of these. Append-only. */
#define MCP_OK		  0
#define MCP_ENOMEM	(-1)	/* out of memory, or a NULL server */
#define MCP_EINVAL	(-2)	/* bad argument: NULL name, bad schema... */
#define MCP_EEXIST	(-3)	/* a tool of that name exists */
#define MCP_ESTATE	(-4)	/* not allowed now (e.g. run twice) */
#define MCP_ESYS	(-5)	/* a system call failed; it was logged */
#define MCP_ENOENT	(-6)	/* no such tool, resource, prompt... */
#define MCP_EUSAGE	(-7)	/* bad command line; usage was printed */
#define MCP_ETIMEDOUT	(-8)	/* no answer in time */
#define MCP_ECLIENT	(-9)	/* the client answered with an error */
#define MCP_ECANCELED	(-10)	/* the call was cancelled meanwhile */
#define MCP_ESERVER	(-11)	/* client: the server answered an error */
#define MCP_EPROTO	(-12)	/* the peer broke the protocol */
#define MCP_EIO		(-13)	/* client: connection failed or lost */
#define MCP_EINPUT	(-14)	/* 2026-07-28: the client's input is asked
				   for; return, the call answers
				   input_required (mcp_call_sample(3)) */

/* A static string describing CODE. Any thread. */
MCP_EXTERN const char	*mcp_strerror(int code);

/* JSON-RPC error codes: a separate namespace from MCP_E*. */
#define MCP_RPC_PARSE_ERROR	 (-32700)
#define MCP_RPC_INVALID_REQUEST	 (-32600)
#define MCP_RPC_METHOD_NOT_FOUND (-32601)
#define MCP_RPC_INVALID_PARAMS	 (-32602)
#define MCP_RPC_INTERNAL_ERROR	 (-32603)
#define MCP_RPC_SERVER_BUSY	 (-32000)
#define MCP_RPC_RESOURCE_NOT_FOUND (-32002)
/* Protocol 2026-07-28 only: never sent to a session that initialized. */
#define MCP_RPC_HEADER_MISMATCH	 (-32020)
#define MCP_RPC_MISSING_CAPABILITY (-32021)
#define MCP_RPC_UNSUPPORTED_VERSION (-32022)

/* ---- Opaque types ----------------------------------------------------- */

/* The process: its loop, registry, worker pool and transports. */
typedef struct mcp_server mcp_server;
/* One tools/call in flight. Valid only inside the tool callback and on
 * the worker thread that runs it; or, once deferred (mcp_call_defer),
 * on the one thread at a time that holds it, until mcp_call_finish. */
typedef struct mcp_call mcp_call;

/* A tool callback. Runs on a worker thread (on the loop thread for a
 * tool flagged MCP_TOOL_LOOP); reports through mcp_result_*.
 * Returning without setting any result sends an empty content list. */
typedef void	(*mcp_tool_fn)(mcp_call *call);
/* A resources/read callback: sets the contents with mcp_result_text,
 * mcp_result_blob or mcp_result_resource_text/_blob. Worker thread. */
typedef void	(*mcp_read_fn)(mcp_call *call);
/* A prompts/get callback: each content block it adds is one message,
 * with the role set by mcp_result_role ("user" by default). Worker. */
typedef void	(*mcp_prompt_fn)(mcp_call *call);
/* A completion/complete callback: adds values with
 * mcp_result_completion. Worker thread. */
typedef void	(*mcp_complete_fn)(mcp_call *call);
/* A notifications/roots/list_changed callback: runs on a worker thread
 * with a call of its own, so it can ask for the new list with
 * mcp_call_roots. It sets no result: a notification has no answer. */
typedef void	(*mcp_roots_fn)(mcp_call *call);

/* ---- Server lifecycle ------------------------------------------------- */

/* A new server. NAME and VERSION are copied and go into serverInfo.
 * Returns NULL only when out of memory; every function taking a NULL
 * server returns MCP_ENOMEM, so a program can check once. Setup thread. */
MCP_EXTERN mcp_server	*mcp_server_new(const char *name, const char *version);

/* Frees every tool with its user data, and the server. NULL is a no-op.
 * Setup thread, after mcp_server_run has returned (which has already
 * joined the workers). */
MCP_EXTERN void		 mcp_server_free(mcp_server *srv);

/* Optional serverInfo.title and initialize instructions; copied. */
MCP_EXTERN int		 mcp_server_set_title(mcp_server *srv, const char *title);
MCP_EXTERN int		 mcp_server_set_instructions(mcp_server *srv,
			    const char *text);

/* Tunables, each with the default in mcp_server_new(3). Before run. */
MCP_EXTERN int		 mcp_server_set_workers(mcp_server *srv, int n);
/* The pool grows past the workers, up to N threads, while every worker
 * is busy and calls wait (slow tools); extra threads leave when idle. */
MCP_EXTERN int		 mcp_server_set_max_workers(mcp_server *srv, int n);
MCP_EXTERN int		 mcp_server_set_max_message(mcp_server *srv,
			    size_t bytes);
MCP_EXTERN int		 mcp_server_set_queue_size(mcp_server *srv, int n);
MCP_EXTERN int		 mcp_server_set_page_size(mcp_server *srv, int n);
MCP_EXTERN int		 mcp_server_set_grace_ms(mcp_server *srv, int ms);

/* Sets any tunable that has a long command-line flag, by that name and
 * with the same value syntax: "keepalive" "15", "allow-host" "mcp.x.org",
 * "http" "127.0.0.1:8080" (mcp_server_main(3) lists them). Strings are
 * copied. MCP_EINVAL (logged) on an unknown name or a bad value. Before
 * run. */
MCP_EXTERN int		 mcp_server_set_option(mcp_server *srv,
			    const char *name, const char *value);

/* Adds a transport: "stdio" for JSON lines on fds 0 and 1, or
 * "http://ADDR:PORT[/base]" for HTTP (docs/HTTP.md). Before run. */
MCP_EXTERN int		 mcp_server_listen(mcp_server *srv, const char *uri)
			    MCP_WUR;

/* Runs the loop on the calling thread until stdin ends (stdio), or
 * mcp_server_stop is called, or SIGTERM or SIGINT arrives; in-flight
 * calls get the grace period, their responses are flushed, and it
 * returns MCP_OK. */
MCP_EXTERN int		 mcp_server_run(mcp_server *srv) MCP_WUR;

/* Asks a running server to stop as if SIGTERM had arrived. Any thread,
 * and async-signal-safe. */
MCP_EXTERN void		 mcp_server_stop(mcp_server *srv);

/* The standard command line (mcp_server_main(3)) and the application's
 * flags: parses ARGV, then the environment (MCP_HTTP for --http) for
 * what ARGV left alone, listens and runs. Returns MCP_OK after a clean
 * run or after --help/--version, MCP_EUSAGE on a bad command line (usage
 * went to stderr; exit 2), or another MCP_E* code. */
MCP_EXTERN int		 mcp_server_main(mcp_server *srv, int argc,
			    char *argv[]);

/* ---- The application's flags (mcp_server_add_flag(3)) ---------------- */

/* TYPE of a flag, or'ed with MCP_FLAG_REQUIRED. Append-only. */
#define MCP_FLAG_STR		1	/* --name VALUE */
#define MCP_FLAG_INT		2	/* --name N: decimal, a long long */
#define MCP_FLAG_BOOL		3	/* --name, --name=false */
#define MCP_FLAG_REQUIRED	0x100	/* missing: a usage error */

/* Adds --NAME (lower-case letters, digits, '-') to the command line of
 * mcp_server_main and to its --help, with HELP. DEF is the default, as
 * it would be written on the command line (NULL: none). The variable
 * PREFIX_NAME sets it too. Strings are copied. Setup thread. */
MCP_EXTERN int		 mcp_server_add_flag(mcp_server *srv,
			    const char *name, int type, const char *def,
			    const char *help);
/* The prefix of the flags' variables (copied; "" for none). The default
 * is the server's name in capitals, '_' for anything but letters and
 * digits: "my-db" reads --path from MY_DB_PATH. Setup thread. */
MCP_EXTERN int		 mcp_server_set_env_prefix(mcp_server *srv,
			    const char *prefix);
/* The variable of flag NAME instead (copied; NULL: none). Setup. */
MCP_EXTERN int		 mcp_server_set_flag_env(mcp_server *srv,
			    const char *name, const char *var);
/* A flag's value: the command line's, else the environment's, else the
 * default. _str gives any flag's as text, NULL if none, valid until
 * mcp_server_free. Any thread once mcp_server_main has parsed them: in
 * every callback. */
MCP_EXTERN const char	*mcp_server_flag_str(mcp_server *srv,
			    const char *name);
MCP_EXTERN long long	 mcp_server_flag_int(mcp_server *srv,
			    const char *name);
MCP_EXTERN int		 mcp_server_flag_bool(mcp_server *srv,
			    const char *name);

/* ---- Tools ------------------------------------------------------------ */

/*
 * Setup calls in a row: every registration and configuration function
 * (mcp_tool_*, mcp_resource_*, mcp_prompt_*, mcp_completion_set,
 * mcp_server_set_*, mcp_server_add_flag, mcp_server_on_*...; not
 * mcp_server_listen, which a program must check) that fails before the
 * server runs logs why and is remembered, and mcp_server_run and
 * mcp_server_main then refuse to start and return the first failure. So
 * a program may check each return, or none (mcp_tool_register(3)). An
 * unregister of what is not there is not kept.
 */

/* Forgets the setup failures kept so far and returns the first (MCP_OK:
 * none), for a program that handled one itself. Setup thread. */
MCP_EXTERN int		 mcp_server_clear_error(mcp_server *srv);

/* Registers a tool. NAME, DESCRIPTION and INPUT_SCHEMA are copied.
 * INPUT_SCHEMA is a declaration of the arguments, "text string(1..),
 * count? integer(1..10) = 1 'How many'" (mcp_args(7)), or, when it
 * opens with '{', JSON text of an object schema ("type":"object"); NULL
 * means {"type":"object"}. UDATA is handed to FN through mcp_call_udata
 * and freed with UDATA_FREE on unregister, on mcp_server_free, or at
 * once if this call fails. Any thread, also while the server runs. */
MCP_EXTERN int		 mcp_tool_register(mcp_server *srv, const char *name,
			    const char *description, const char *input_schema,
			    mcp_tool_fn fn, void *udata,
			    void (*udata_free)(void *));

/* Removes a tool; calls already running finish. Any thread. */
MCP_EXTERN int		 mcp_tool_unregister(mcp_server *srv, const char *name);

/* Optional fields of a registered tool. Strings are copied; SCHEMA is
 * what structuredContent must match, a declaration or JSON text of an
 * object schema as for INPUT_SCHEMA;
 * ANNOTATIONS is JSON text of a ToolAnnotations object. Any thread. */
MCP_EXTERN int		 mcp_tool_set_title(mcp_server *srv, const char *name,
			    const char *title);
MCP_EXTERN int		 mcp_tool_set_output_schema(mcp_server *srv,
			    const char *name, const char *schema);
MCP_EXTERN int		 mcp_tool_set_annotations(mcp_server *srv,
			    const char *name, const char *annotations);
/* A time limit for calls of the tool, in ms (0: the server's default,
 * option "tool-timeout", which is 0: none). When it passes, the call is
 * flagged cancelled, the client gets an isError result saying so, and
 * the callback's late result is dropped. Any thread. */
MCP_EXTERN int		 mcp_tool_set_timeout(mcp_server *srv,
			    const char *name, int ms);
/* ICONS is JSON text of an array of Icon objects ({"src", "mimeType",
 * "sizes", "theme"}), checked and copied; NULL removes them. Sent only
 * to 2025-11-25 sessions. Any thread. */
MCP_EXTERN int		 mcp_tool_set_icons(mcp_server *srv, const char *name,
			    const char *icons);
/* FLAGS of a tool, or'ed (0 clears them), for the calls that start from
 * now on. MCP_TOOL_LOOP: the callback runs on the loop thread, saving
 * the hand-off to a worker and back; it must never block, sleep or wait
 * on I/O, and mcp_call_sample, _elicit and _roots return MCP_ESTATE
 * there, except in 2026-07-28, where nothing waits: they ask through
 * input_required (mcp_tool_set_flags(3)). MCP_TOOL_TASK_OPTIONAL and _REQUIRED
 * (not both): the tool's execution.taskSupport, for 2025-11-25 clients,
 * which may, or must, call it as a task (tasks/result fetches its
 * answer later); without either it is "forbidden". MCP_TOOL_INPUT_FIRST,
 * with either: in 2026-07-28 (the tasks extension) the call asks the
 * client first, as a plain request does (input_required), and becomes
 * a task on the retry that carries the answers. Any thread. */
#define MCP_TOOL_LOOP	0x1	/* never blocks: runs on the loop thread */
#define MCP_TOOL_TASK_OPTIONAL	0x2	/* may be called as a task */
#define MCP_TOOL_TASK_REQUIRED	0x4	/* must be called as a task */
#define MCP_TOOL_INPUT_FIRST	0x8	/* 2026-07-28: asks, then is a task */
MCP_EXTERN int		 mcp_tool_set_flags(mcp_server *srv, const char *name,
			    unsigned flags);

/* ---- Resources (mcp_resource_register(3)) ----------------------------- */

/* Registers a static resource. URI, NAME, DESCRIPTION and MIME_TYPE are
 * copied (the last two may be NULL); FN runs for resources/read of URI.
 * UDATA is freed with UDATA_FREE on unregister, on mcp_server_free, or
 * at once if this fails. Any thread, also while the server runs: then
 * every session gets notifications/resources/list_changed. */
MCP_EXTERN int		 mcp_resource_register(mcp_server *srv,
			    const char *uri, const char *name,
			    const char *description, const char *mime_type,
			    mcp_read_fn fn, void *udata,
			    void (*udata_free)(void *));
/* Removes a resource; reads already running finish. Any thread. */
MCP_EXTERN int		 mcp_resource_unregister(mcp_server *srv,
			    const char *uri);
/* Optional fields: a title (copied; NULL removes it) and a size in bytes
 * (< 0 removes it). Any thread. */
MCP_EXTERN int		 mcp_resource_set_title(mcp_server *srv,
			    const char *uri, const char *title);
MCP_EXTERN int		 mcp_resource_set_size(mcp_server *srv,
			    const char *uri, long long size);
/* Annotations of the resource in resources/list, as for
 * mcp_result_annotate (all three left out removes them), and its icons,
 * as for mcp_tool_set_icons. Any thread. */
MCP_EXTERN int		 mcp_resource_set_annotations(mcp_server *srv,
			    const char *uri, int audience, double priority,
			    const char *last_modified);
MCP_EXTERN int		 mcp_resource_set_icons(mcp_server *srv,
			    const char *uri, const char *icons);
/* A resource template: URI_TEMPLATE is RFC 6570 level 1, literals and
 * {name} variables ("file:///logs/{day}.txt"); mcp_call_var gives the
 * variables to FN. Otherwise as mcp_resource_register. Any thread. */
MCP_EXTERN int		 mcp_resource_template_register(mcp_server *srv,
			    const char *uri_template, const char *name,
			    const char *description, const char *mime_type,
			    mcp_read_fn fn, void *udata,
			    void (*udata_free)(void *));
MCP_EXTERN int		 mcp_resource_template_unregister(mcp_server *srv,
			    const char *uri_template);
MCP_EXTERN int		 mcp_resource_template_set_title(mcp_server *srv,
			    const char *uri_template, const char *title);
MCP_EXTERN int		 mcp_resource_template_set_annotations(
			    mcp_server *srv, const char *uri_template,
			    int audience, double priority,
			    const char *last_modified);
MCP_EXTERN int		 mcp_resource_template_set_icons(mcp_server *srv,
			    const char *uri_template, const char *icons);
/* Sends notifications/resources/updated for URI (copied) to the
 * sessions subscribed to it. Any thread; a no-op unless running. */
MCP_EXTERN int		 mcp_resource_notify_updated(mcp_server *srv,
			    const char *uri);

/* ---- Prompts (mcp_prompt_register(3)) --------------------------------- */

/* Registers a prompt; as mcp_resource_register for copies, UDATA and
 * threads (prompts/list_changed while running). Any thread. */
MCP_EXTERN int		 mcp_prompt_register(mcp_server *srv,
			    const char *name, const char *description,
			    mcp_prompt_fn fn, void *udata,
			    void (*udata_free)(void *));
MCP_EXTERN int		 mcp_prompt_unregister(mcp_server *srv,
			    const char *name);
MCP_EXTERN int		 mcp_prompt_set_title(mcp_server *srv,
			    const char *name, const char *title);
/* As mcp_tool_set_icons. Any thread. */
MCP_EXTERN int		 mcp_prompt_set_icons(mcp_server *srv,
			    const char *name, const char *icons);
/* Declares an argument of PROMPT (strings copied; DESCRIPTION may be
 * NULL). A prompts/get without a REQUIRED one gets -32602 and FN never
 * runs. Any thread. */
MCP_EXTERN int		 mcp_prompt_add_argument(mcp_server *srv,
			    const char *prompt, const char *name,
			    const char *description, int required);

/* ---- Completion (mcp_completion_set(3)) ------------------------------- */

/* The completion/complete callback for prompt arguments and template
 * variables; with one set, the completions capability is declared. FN
 * NULL removes it. UDATA as for mcp_tool_register. Before run. */
MCP_EXTERN int		 mcp_completion_set(mcp_server *srv,
			    mcp_complete_fn fn, void *udata,
			    void (*udata_free)(void *));

/* ---- Roots (mcp_server_on_roots_changed(3)) --------------------------- */

/* The callback for the client's notifications/roots/list_changed, run
 * once per notification from a client that declared roots; FN NULL
 * removes it. UDATA as for mcp_tool_register. Before run. */
MCP_EXTERN int		 mcp_server_on_roots_changed(mcp_server *srv,
			    mcp_roots_fn fn, void *udata,
			    void (*udata_free)(void *));

/* ---- Sessions (mcp_call_session(3)) ----------------------------------- */

/* What a call knows of its session: its id and transport, the
 * negotiated version, the client's clientInfo and capabilities, the
 * identity it was opened with, and the user data the open hook gave.
 * Never changes once open; valid inside a callback until it returns (a
 * deferred call: until mcp_call_finish), and in the hooks below until
 * the close hook returns. */
typedef struct mcp_session mcp_session;

/* Runs on the loop thread when a session opens: after initialize was
 * accepted (before its answer goes), or at the first request of a
 * stateless one. Returns the session's data (may be NULL), which the
 * callbacks read with mcp_call_session_data from worker threads, so it
 * must be safe to use from several at once. Must not block. */
typedef void	*(*mcp_session_open_fn)(mcp_session *sess, void *udata);
/* Runs on the loop thread once the session has ended and the last
 * call of its has returned (or, deferred, been finished), once for each
 * open: frees DATA. */
typedef void	 (*mcp_session_close_fn)(mcp_session *sess, void *data,
		    void *udata);

/* Sets the hooks (either may be NULL; both NULL removes them). UDATA is
 * handed to both and freed with UDATA_FREE when replaced, on
 * mcp_server_free, or at once if this fails. Not in relay mode. Before
 * run. */
MCP_EXTERN int		 mcp_server_on_session(mcp_server *srv,
			    mcp_session_open_fn open_fn,
			    mcp_session_close_fn close_fn, void *udata,
			    void (*udata_free)(void *));

/* The session's id (Mcp-Session-Id, the legacy sessionId), "stdio", or
 * "" for a stateless request; its transport: "stdio", "sse" or
 * "streamable"; its protocol version ("2025-06-18"). Static or the
 * session's: valid as long as SESS. Any thread. */
MCP_EXTERN const char	*mcp_session_id(mcp_session *sess);
MCP_EXTERN const char	*mcp_session_transport(mcp_session *sess);
MCP_EXTERN const char	*mcp_session_protocol(mcp_session *sess);
/* The clientInfo and capabilities the client sent in initialize (NULL
 * and {} when it left them out; NULL for a stateless request). Borrowed
 * and read-only: copy them (json_deep_copy) to keep them. Any thread. */
MCP_EXTERN const json_t	*mcp_session_client_info(mcp_session *sess);
MCP_EXTERN const json_t	*mcp_session_client_capabilities(
			    mcp_session *sess);
/* The subject and claims the authentication hook gave for the request
 * that opened the session (mcp_server_set_auth(3)); NULL when none.
 * Borrowed, read-only. Any thread. */
MCP_EXTERN const char	*mcp_session_identity(mcp_session *sess);
MCP_EXTERN const json_t	*mcp_session_identity_claims(mcp_session *sess);
/* What the open hook returned; NULL before it has run. */
MCP_EXTERN void		*mcp_session_data(mcp_session *sess);

/* ---- Authentication (mcp_server_set_auth(3)) -------------------------- */

/* One HTTP request's bearer token being checked: the hook reports
 * through the setters below. Valid only inside the hook. */
typedef struct mcp_auth mcp_auth;

/* What the hook answers. */
#define MCP_AUTH_OK		0	/* let the request in */
#define MCP_AUTH_INVALID	401	/* no valid token: 401 invalid_token */
#define MCP_AUTH_FORBIDDEN	403	/* valid, not allowed: 403
					 * insufficient_scope */

/* Checks TOKEN (what follows "Authorization: Bearer "), on the loop
 * thread, for every HTTP request that carries one: it must be fast, or
 * cache what it verified. */
typedef int	(*mcp_auth_fn)(mcp_auth *auth, const char *token,
		    void *udata);

/* Sets the hook: over HTTP, a request without a bearer token gets 401,
 * and one with a token gets what FN answers. It replaces --auth-token
 * and --auth-token-file. FN NULL removes it. UDATA as for
 * mcp_tool_register. Before run. */
MCP_EXTERN int		 mcp_server_set_auth(mcp_server *srv, mcp_auth_fn fn,
			    void *udata, void (*udata_free)(void *));
/* Inside the hook: who the token names (copied; a session stays bound
 * to it), and its claims (stolen, even on failure; NULL is out of
 * memory), read by callbacks through mcp_call_identity(3). */
MCP_EXTERN int		 mcp_auth_set_subject(mcp_auth *auth,
			    const char *subject);
MCP_EXTERN int		 mcp_auth_set_claims_new(mcp_auth *auth,
			    json_t *claims);
/* Inside the hook: the challenge's error_description and, for 403, the
 * scope the request needs (copied; default --auth-scopes). */
MCP_EXTERN int		 mcp_auth_set_error(mcp_auth *auth,
			    const char *description);
MCP_EXTERN int		 mcp_auth_set_scope(mcp_auth *auth, const char *scope);
/* Inside the hook: a header of the request (NULL when absent), e.g.
 * Mcp-Session-Id to cache by session. Borrowed until it returns. */
MCP_EXTERN const char	*mcp_auth_header(mcp_auth *auth, const char *name);

/* ---- The call context (inside the callback, on its worker thread) ----- */

/*
 * Or on a deferred call (mcp_call_defer(3)), by the one thread that
 * holds it: everything in this section and the next, until
 * mcp_call_finish; mcp_call_cancelled from any thread.
 */

/* Inside the callback: the answer does not go when the callback
 * returns, but when mcp_call_finish is called, from any thread. The
 * worker is free once the callback returns; the call, its arguments
 * included, stays valid, held by one thread at a time, until then. A
 * cancelled or timed-out call must still be finished (it is freed, its
 * answer dropped). MCP_OK (also twice), MCP_EINVAL. */
MCP_EXTERN int		 mcp_call_defer(mcp_call *call);
/* Any thread, exactly once per deferred call: serialises the answer set
 * so far and hands it to the loop; CALL is invalid afterwards. MCP_OK,
 * or MCP_ESTATE for a call that was not deferred (left untouched). */
MCP_EXTERN int		 mcp_call_finish(mcp_call *call);
/* The id of the call's session, for mcp_server_log_to and the other
 * *_to functions later, from any thread: the Mcp-Session-Id, the legacy
 * sessionId or "stdio"; "" for a stateless request, which no later
 * message can reach. Borrowed: copy it to keep it past the call. */
MCP_EXTERN const char	*mcp_call_session_id(mcp_call *call);

/* The user data of the tool, resource, template, prompt or completion
 * callback; the tool's name (NULL outside tools/call). */
MCP_EXTERN void		*mcp_call_udata(mcp_call *call);
MCP_EXTERN const char	*mcp_call_tool(mcp_call *call);
/* The call's session (never NULL inside a callback), and the data its
 * open hook gave (mcp_call_session(3)). */
MCP_EXTERN mcp_session	*mcp_call_session(mcp_call *call);
MCP_EXTERN void		*mcp_call_session_data(mcp_call *call);
/* Over HTTP with an authentication hook: the subject and claims of the
 * request that made this call (a refreshed token's, same subject as the
 * session's); NULL on stdio, without a hook, or when it set none.
 * Borrowed and read-only, as long as the call. */
MCP_EXTERN const char	*mcp_call_identity(mcp_call *call);
MCP_EXTERN const json_t	*mcp_call_identity_claims(mcp_call *call);
/* The URI being read, or the ref/resource URI being completed; the
 * prompt being got, or the ref/prompt being completed; else NULL. */
MCP_EXTERN const char	*mcp_call_uri(mcp_call *call);
MCP_EXTERN const char	*mcp_call_prompt(mcp_call *call);
/* A template variable (read), a prompt argument (get) or a context
 * argument (complete), by name; NULL if absent or not a string.
 * Borrowed until the callback returns. */
MCP_EXTERN const char	*mcp_call_var(mcp_call *call, const char *name);
/* completion/complete: the argument's name and the value typed so far
 * (borrowed); MCP_EINVAL in any other call. */
MCP_EXTERN int		 mcp_call_complete_arg(mcp_call *call,
			    const char **name, const char **value);

/* The arguments object, already validated against the input schema
 * (tools; a declared tool's defaults filled in), or the variables or
 * arguments of mcp_call_var. Borrowed until
 * the callback returns; never NULL. */
MCP_EXTERN json_t	*mcp_call_args(mcp_call *call);

/*
 * One argument as a C value, by name, or by a path into the arguments
 * ("address.city", "tags[0]") when no member has that very name. A
 * declared tool (mcp_args(7)) has its defaults filled in, and never sees
 * a string holding U+0000. Absent (or null): NULL, 0 or 0.0; an integer
 * beyond a long long: LLONG_MAX or LLONG_MIN. Of another type: a program
 * error, logged, answered "" or 0. Borrowed until the callback returns
 * (a deferred call: until mcp_call_finish).
 */
MCP_EXTERN const char	*mcp_arg_str(mcp_call *call, const char *name);
MCP_EXTERN long long	 mcp_arg_int(mcp_call *call, const char *name);
MCP_EXTERN double	 mcp_arg_num(mcp_call *call, const char *name);
MCP_EXTERN int		 mcp_arg_bool(mcp_call *call, const char *name);
MCP_EXTERN json_t	*mcp_arg_json(mcp_call *call, const char *name);
/* Whether it is there and not null; its length: bytes of a string,
 * items of an array, members of an object, else 0. */
MCP_EXTERN int		 mcp_arg_has(mcp_call *call, const char *name);
MCP_EXTERN size_t	 mcp_arg_len(mcp_call *call, const char *name);

/* Non-zero once the client cancelled the call, its session ended, or
 * the server is shutting down. A long tool polls it and returns early. */
MCP_EXTERN int		 mcp_call_cancelled(const mcp_call *call);

/* Reports progress. Sent as notifications/progress only when the request
 * carried _meta.progressToken, and only when PROGRESS is above the last
 * value sent; always before the response. TOTAL < 0 and MESSAGE NULL are
 * left out (MESSAGE is copied). */
MCP_EXTERN int		 mcp_call_progress(mcp_call *call, double progress,
			    double total, const char *message);
/* The request's _meta.progressToken (a string or an integer), or NULL
 * when it carried none (or one of another type). Borrowed until the
 * callback returns. */
MCP_EXTERN const json_t	*mcp_call_progress_token(mcp_call *call);

/* A log message to the client (notifications/message, level as in
 * mcp_log, LOGGER may be NULL), when the session's logging/setLevel lets
 * it through; also written to stderr at the process log level. */
MCP_EXTERN int		 mcp_call_log(mcp_call *call, int level,
			    const char *logger, const char *fmt, ...)
			    MCP_PRINTF(4, 5);

/* Streamable HTTP, 2025-11-25 sessions: ends the HTTP response carrying
 * this call's stream now, after the messages sent so far; the client
 * comes back with GET and Last-Event-ID and gets the rest, the answer
 * included. Elsewhere it does nothing. For servers that poll rather than
 * hold connections, and for testing clients' resumption. */
MCP_EXTERN int		 mcp_call_close_stream(mcp_call *call);

/*
 * Requests to the client, from inside a callback: each sends the request
 * (on stdio down stdout, on HTTP+SSE down the session's stream), blocks
 * this worker until the client answers, and stores the client's result
 * in *RESULT (a new reference; NULL on failure). PARAMS is stolen, even
 * on failure. TIMEOUT_MS 0 means 60000. Nothing is sent, and MCP_ESTATE
 * returned at once, when the client did not declare the capability
 * (sampling; elicitation, with "url" mode only for 2025-11-25 sessions
 * that declared it; roots), and on the loop thread (a MCP_TOOL_LOOP
 * tool's callback), which would never see the answer. MCP_ETIMEDOUT,
 * MCP_ECANCELED, or MCP_ECLIENT with the client's error object in
 * *RESULT. A late answer is ignored. In protocol 2026-07-28 nothing
 * blocks (multi round-trip requests): the answer comes from the retry
 * of the request, or MCP_EINPUT returns at once and the callback should
 * return; the call is answered input_required, and the retry runs the
 * callback again from the start (mcp_call_round).
 */
MCP_EXTERN int		 mcp_call_sample(mcp_call *call, json_t *params,
			    int timeout_ms, json_t **result);
MCP_EXTERN int		 mcp_call_elicit(mcp_call *call, json_t *params,
			    int timeout_ms, json_t **result);
MCP_EXTERN int		 mcp_call_roots(mcp_call *call, int timeout_ms,
			    json_t **result);
/* Which run of the callback this is: 1, or (2026-07-28) 1 plus the
 * input_required answers the request had before this retry. The thread
 * that runs the callback. */
MCP_EXTERN int		 mcp_call_round(mcp_call *call);
/* 2026-07-28: KEY (1 to 63 visible ASCII characters, copied) names the
 * callback's next request to the client in inputRequests, instead of
 * the library's "input-K"; ignored when this round has that key already,
 * and in a legacy session. Set it again on every round. The thread that
 * runs the callback. */
MCP_EXTERN int		 mcp_call_input_key(mcp_call *call, const char *key);

/* json_unpack_ex on the arguments. On failure the result becomes an
 * isError result carrying jansson's message, and MCP_EINVAL returns. A
 * string holding \u0000 is refused to "s" (it would be cut short) and
 * given to "s%", which reads its length too. */
MCP_EXTERN int		 mcp_args_unpack(mcp_call *call, const char *fmt, ...);

/* ---- Results: each call appends one content block ---------------------- */

/* A text block; S is copied. In resources/read: text contents of the URI
 * read, with the resource's MIME type. */
MCP_EXTERN int		 mcp_result_text(mcp_call *call, const char *s);
/* The same, of LEN bytes, which may include NUL bytes ("s%" reads such a
 * string with its length). */
MCP_EXTERN int		 mcp_result_textn(mcp_call *call, const char *s,
			    size_t len);
MCP_EXTERN int		 mcp_result_textf(mcp_call *call, const char *fmt, ...)
			    MCP_PRINTF(2, 3);
/* Image and audio blocks: DATA (LEN bytes) is base64-encoded for you. */
MCP_EXTERN int		 mcp_result_image(mcp_call *call, const void *data,
			    size_t len, const char *mime_type);
MCP_EXTERN int		 mcp_result_audio(mcp_call *call, const void *data,
			    size_t len, const char *mime_type);
/* resources/read: blob contents of the URI read (base64 done here). */
MCP_EXTERN int		 mcp_result_blob(mcp_call *call, const void *data,
			    size_t len);
/* An embedded resource with text contents, or with binary contents that
 * are base64-encoded for you. MIME_TYPE may be NULL. In resources/read,
 * a contents item: URI NULL is the URI read, MIME_TYPE NULL its type. */
MCP_EXTERN int		 mcp_result_resource_text(mcp_call *call,
			    const char *uri, const char *mime_type,
			    const char *text);
MCP_EXTERN int		 mcp_result_resource_blob(mcp_call *call,
			    const char *uri, const char *mime_type,
			    const void *data, size_t len);
/* A resource_link block; DESCRIPTION and MIME_TYPE may be NULL. */
MCP_EXTERN int		 mcp_result_resource_link(mcp_call *call,
			    const char *uri, const char *name,
			    const char *description, const char *mime_type);
/* structuredContent. _json borrows V (and copies it); _json_new steals
 * it, even on failure, and treats NULL as out of memory. With no text
 * block, the serialised JSON is added as one. */
MCP_EXTERN int		 mcp_result_json(mcp_call *call, json_t *v);
MCP_EXTERN int		 mcp_result_json_new(mcp_call *call, json_t *v);
/* Annotates the content block added last: AUDIENCE is MCP_AUDIENCE_*
 * bits (0 leaves it out), PRIORITY 0 to 1 (< 0 leaves it out),
 * LAST_MODIFIED an RFC 3339 date-time, "2025-01-12T15:00:58Z" (copied;
 * NULL leaves it out; sent only to sessions of 2025-06-18 on). Once per
 * block; MCP_ESTATE with no block or twice. Tools and prompts only. */
#define MCP_AUDIENCE_USER	0x01
#define MCP_AUDIENCE_ASSISTANT	0x02
MCP_EXTERN int		 mcp_result_annotate(mcp_call *call, int audience,
			    double priority, const char *last_modified);
/* A tool error the model should see: a text block and isError: true. */
MCP_EXTERN int		 mcp_result_error(mcp_call *call, const char *msg);
MCP_EXTERN int		 mcp_result_errorf(mcp_call *call, const char *fmt, ...)
			    MCP_PRINTF(2, 3);
/* The rare protocol error: the response becomes a JSON-RPC error with
 * CODE and MSG instead of a result. Outside tools/call, mcp_result_error
 * does this with MCP_RPC_INTERNAL_ERROR. */
MCP_EXTERN int		 mcp_result_rpc_error(mcp_call *call, int code,
			    const char *msg);
/* prompts/get: the role ("user" or "assistant") of the messages added
 * from now on, and the result's description (copied). */
MCP_EXTERN int		 mcp_result_role(mcp_call *call, const char *role);
MCP_EXTERN int		 mcp_result_description(mcp_call *call,
			    const char *text);
/* completion/complete: appends a value (copied); past 100 values the
 * rest are counted into total and hasMore is set. _total sets total
 * (< 0: not sent) and, if HAS_MORE, hasMore. */
MCP_EXTERN int		 mcp_result_completion(mcp_call *call,
			    const char *value);
MCP_EXTERN int		 mcp_result_completion_total(mcp_call *call,
			    long long total, int has_more);

/* ---- Notifications outside a call (mcp_server_log(3)) ----------------- */

/*
 * Any thread, at any time while the server runs (not after
 * mcp_server_free has begun): queued to the loop, which sends them in
 * the order queued. "_to" functions address one session by the id
 * mcp_call_session_id gave, and return MCP_ENOENT when that session has
 * ended (or never existed); the others go to every initialized session
 * and return MCP_OK, also while the server is not running (then to
 * nobody). MCP_ESTATE when 4096 messages are waiting for the loop
 * already (the message is dropped). Strings are copied.
 */

/* notifications/message to every session, or to one, that lets LEVEL
 * (as in mcp_log) through its logging/setLevel; LOGGER may be NULL. Also
 * written to stderr at the process log level, as mcp_call_log does. */
MCP_EXTERN int		 mcp_server_log(mcp_server *srv, int level,
			    const char *logger, const char *fmt, ...)
			    MCP_PRINTF(4, 5);
MCP_EXTERN int		 mcp_server_log_to(mcp_server *srv,
			    const char *session_id, int level,
			    const char *logger, const char *fmt, ...)
			    MCP_PRINTF(5, 6);
/* notifications/{tools,resources,prompts}/list_changed, for each of the
 * MCP_LIST_* bits in LISTS, to every session or to one. (Registering and
 * removing while running sends them to every session already.) */
#define MCP_LIST_TOOLS		0x01
#define MCP_LIST_RESOURCES	0x02
#define MCP_LIST_PROMPTS	0x04
MCP_EXTERN int		 mcp_server_notify_list_changed(mcp_server *srv,
			    int lists);
MCP_EXTERN int		 mcp_server_notify_list_changed_to(mcp_server *srv,
			    const char *session_id, int lists);
/* notifications/resources/updated for URI to one session, if it is
 * subscribed to URI (mcp_resource_notify_updated: to every one that is). */
MCP_EXTERN int		 mcp_resource_notify_updated_to(mcp_server *srv,
			    const char *session_id, const char *uri);

/* ---- Relay (mcp_server_set_relay(3)) ---------------------------------- */

/*
 * A relay serves what its sessions ask with someone else's answers: a
 * gateway in front of another MCP server, a proxy. The transports, the
 * sessions, the limits and the JSON-RPC rules stay the library's; the
 * methods are the relay's. Everything below runs on the loop thread.
 */

/* One client session, as a relay sees it. Valid from the first message
 * the relay gets for it until its closed callback returns. */
typedef struct mcp_peer mcp_peer;

struct mcp_relay {
	/* May a new session open? NULL: yes; else why not, which the
	 * client is told (HTTP 503). May be NULL. */
	const char	*(*admit)(void *udata);
	/* A message from PEER: a request (initialize among them: its
	 * answer sets the session's protocol version), a notification, or
	 * an answer to one of the relay's own requests. MSG is borrowed.
	 * The library answers ping itself, refuses what breaks JSON-RPC or
	 * comes before initialize, and turns notifications/cancelled, and
	 * a client that leaves mid-request, into a notifications/cancelled
	 * message for each request the relay still owes; an answer sent
	 * after that is dropped. */
	void		 (*message)(mcp_peer *peer, json_t *msg, void *udata);
	/* PEER's session ended (closed, deleted, timed out, shut down):
	 * every request of its was cancelled first. May be NULL. */
	void		 (*closed)(mcp_peer *peer, void *udata);
};

/* Makes SRV a relay: OPS (kept, not copied) gets what the sessions
 * send instead of the registered tools, resources and prompts. Before
 * run. */
MCP_EXTERN int		 mcp_server_set_relay(mcp_server *srv,
			    const struct mcp_relay *ops, void *udata);
/* The server's libev loop, for watchers and clients of the relay's
 * own (mcp_client_set_loop). */
MCP_EXTERN struct ev_loop *mcp_server_loop(mcp_server *srv);

/* Sends MSG (stolen) to PEER. An answer goes where its request came
 * from (its HTTP response, its batch); a request or notification goes
 * with the request RELATED names when that one is still owed (its
 * stream), else on the session's own channel. MCP_ESTATE when the
 * session has ended; MCP_ENOENT for an answer nobody waits for any
 * more (cancelled: dropped); MCP_EINVAL when MSG is no message. */
MCP_EXTERN int		 mcp_peer_send_new(mcp_peer *peer, json_t *msg,
			    const json_t *related);
/* Ends PEER's session as DELETE would, once what was sent has gone out:
 * its next HTTP request gets 404. */
MCP_EXTERN void		 mcp_peer_close(mcp_peer *peer);
/* The relay's own pointer for PEER, NULL until set. */
MCP_EXTERN void		 mcp_peer_set_data(mcp_peer *peer, void *data);
MCP_EXTERN void		*mcp_peer_data(mcp_peer *peer);
/* The session's id (Mcp-Session-Id, the legacy sessionId, "stdio"),
 * for logs; "" for a stateless request. */
MCP_EXTERN const char	*mcp_peer_id(mcp_peer *peer);
/* Its negotiated protocol version ("2025-06-18"). */
MCP_EXTERN const char	*mcp_peer_version(mcp_peer *peer);
/* Is it stateless (one request, no initialize)? */
MCP_EXTERN int		 mcp_peer_stateless(mcp_peer *peer);
/* The version this library answers an initialize asking for WANT
 * with: WANT when it speaks it, else its latest. Any thread. */
MCP_EXTERN const char	*mcp_protocol_negotiate(const char *want);

/* ---- Client ----------------------------------------------------------- */

/*
 * The other side of the wire: mcp_client_new(3). A client speaks to one
 * server, over stdio (a child process) or a URL (Streamable HTTP, with
 * the fallback to legacy HTTP+SSE, or SSE forced). Two ways to use it:
 *  - synchronous: the client runs its own loop on a thread of its own;
 *    the blocking functions may be called from many threads at once;
 *  - asynchronous: mcp_client_set_loop gives it the caller's libev loop,
 *    and the _async functions report through callbacks on that loop.
 * Handlers and callbacks always run on the client's loop thread. On
 * failure, every function that yields a result sets *RESULT to an error
 * object {code, message[, data]}: the server's own for MCP_ESERVER, else
 * code is the MCP_E* value. Strings are copied; a function with "_new"
 * in its name steals its json_t; results are new references.
 */
typedef struct mcp_client mcp_client;
/* A request from the server that a handler answers, from any thread,
 * exactly once, with mcp_client_reply_result or _error. */
typedef struct mcp_client_reply mcp_client_reply;

/* A request's end, on the loop thread. RC is MCP_OK with the result, or
 * an error with an error object (above). RESULT is borrowed: take a
 * reference to keep it. */
typedef void	(*mcp_client_cb)(mcp_client *c, int rc, json_t *result,
		    void *udata);
/* notifications/progress for the request of id ID: PROGRESS, TOTAL
 * (< 0: none) and MESSAGE (NULL: none). Loop thread. */
typedef void	(*mcp_client_progress_fn)(mcp_client *c, long long id,
		    double progress, double total, const char *message,
		    void *udata);
/* Any other notification from the server. Loop thread. */
typedef void	(*mcp_client_notify_fn)(mcp_client *c, const char *method,
		    json_t *params, void *udata);
/* A request from the server (sampling, elicitation, roots...). */
typedef void	(*mcp_client_request_fn)(mcp_client *c,
		    mcp_client_reply *reply, const char *method,
		    json_t *params, void *udata);
/* A line a stdio server wrote on its stderr (mcp_client_on_stderr). */
typedef void	(*mcp_client_stderr_fn)(mcp_client *c, const char *line,
		    size_t len, void *udata);
/* Every message, as sent (OUT 1) or received (OUT 0): for tracing. */
typedef void	(*mcp_client_trace_fn)(mcp_client *c, int out,
		    const char *json, size_t len, void *udata);

/* A new client; NAME and VERSION go into clientInfo. NULL on ENOMEM. */
MCP_EXTERN mcp_client	*mcp_client_new(const char *name, const char *version);
/* Closes the connection (DELETE for an HTTP session; for a child: stdin
 * closed, then SIGTERM, then SIGKILL), fails what is in flight with
 * MCP_ECANCELED and frees. NULL is a no-op. Not from a handler. */
MCP_EXTERN void		 mcp_client_free(mcp_client *c);
/* Options by name, before connecting: "timeout" (seconds, default 30),
 * "max-timeout" (seconds a request may last, progress or not; 0 none),
 * "progress-resets-timeout" (default 1), "protocol" (auto, the
 * default: 2026-07-28 when the server speaks it, else initialize;
 * "2026-07-28" only; "legacy" or a version for initialize),
 * "probe-timeout" (seconds auto waits for server/discover, default 10),
 * "transport" (auto, http, sse), "header" ("Name: value",
 * repeatable), "listen" (the GET stream for server messages, default 1),
 * "max-message" (bytes, default 4 MiB), "progress" (0: never ask for
 * progress, default 1), "cacert" (a CA file for https),
 * "insecure" (1: no TLS verification), "connect-timeout" (seconds). */
MCP_EXTERN int		 mcp_client_set_option(mcp_client *c,
			    const char *name, const char *value);
/* Asynchronous use: run on LOOP, whose thread is then the only one that
 * may call the client's functions, except the blocking ones and
 * mcp_client_reply_*, which any other thread may call while LOOP runs. */
MCP_EXTERN int		 mcp_client_set_loop(mcp_client *c,
			    struct ev_loop *loop);
/* Handlers, before connecting. A request handler for "roots/list",
 * "sampling/createMessage" or "elicitation/create" also declares its
 * capability; one for "*" takes every method that has none of its own.
 * ping is answered by the client itself; a request nobody handles is
 * answered -32601. */
MCP_EXTERN int		 mcp_client_on_request(mcp_client *c,
			    const char *method, mcp_client_request_fn fn,
			    void *udata);
MCP_EXTERN int		 mcp_client_on_notification(mcp_client *c,
			    mcp_client_notify_fn fn, void *udata);
MCP_EXTERN int		 mcp_client_on_progress(mcp_client *c,
			    mcp_client_progress_fn fn, void *udata);
MCP_EXTERN int		 mcp_client_on_trace(mcp_client *c,
			    mcp_client_trace_fn fn, void *udata);
/* A stdio server's stderr, a line at a time (without its newline; a
 * line over 4 KiB comes in pieces), instead of going to this process's
 * stderr. Loop thread. Before connecting. */
MCP_EXTERN int		 mcp_client_on_stderr(mcp_client *c,
			    mcp_client_stderr_fn fn, void *udata);
/* The end of the first initialization, once: MCP_OK with initialize's
 * result, or the error. The asynchronous use's signal that it is ready;
 * requests made before it wait for it anyway. Loop thread. */
MCP_EXTERN int		 mcp_client_on_ready(mcp_client *c, mcp_client_cb fn,
			    void *udata);
/* The connection's end after it was ready (the server exited, the
 * session was lost for good), once: RC and an error object, {"message"},
 * saying why. Requests still waiting have failed just before. Loop
 * thread; FN must not free the client (do it from a later callback of
 * the loop's). */
MCP_EXTERN int		 mcp_client_on_lost(mcp_client *c, mcp_client_cb fn,
			    void *udata);
/* The capabilities initialize declares (stolen), instead of those that
 * the handlers and roots imply: for a client that speaks for another
 * (a gateway). Before connecting. */
MCP_EXTERN int		 mcp_client_set_capabilities_new(mcp_client *c,
			    json_t *caps);
/* The roots this client offers (an array of {uri, name}; stolen), which
 * answer roots/list; set again after connecting, it sends
 * notifications/roots/list_changed. */
MCP_EXTERN int		 mcp_client_set_roots_new(mcp_client *c,
			    json_t *roots);
/* The answer to a server request: a result (stolen) or an error. */
MCP_EXTERN int		 mcp_client_reply_result(mcp_client_reply *reply,
			    json_t *result);
MCP_EXTERN int		 mcp_client_reply_error(mcp_client_reply *reply,
			    int code, const char *message);
/* The request's id as the server sent it (borrowed, valid until the
 * reply): to match the server's notifications/cancelled. */
MCP_EXTERN json_t	*mcp_client_reply_id(mcp_client_reply *reply);

/* Connects and initializes. ARGV[0] is looked up in PATH; ENVP NULL
 * inherits the environment; CWD NULL stays. URL is http:// or https://.
 * Blocking (the synchronous use), or, with mcp_client_set_loop, started:
 * requests made meanwhile wait for the initialization. */
MCP_EXTERN int		 mcp_client_connect_stdio(mcp_client *c,
			    char *const argv[], char *const envp[],
			    const char *cwd) MCP_WUR;
MCP_EXTERN int		 mcp_client_connect_url(mcp_client *c,
			    const char *url) MCP_WUR;
/* After connecting: why it failed (a static or client-owned string). */
MCP_EXTERN const char	*mcp_client_error(mcp_client *c);
/* What initialize (2026-07-28: server/discover) gave: borrowed, valid
 * until mcp_client_free. */
MCP_EXTERN const char	*mcp_client_protocol(mcp_client *c);
MCP_EXTERN json_t	*mcp_client_server_info(mcp_client *c);
MCP_EXTERN json_t	*mcp_client_server_capabilities(mcp_client *c);
MCP_EXTERN const char	*mcp_client_instructions(mcp_client *c);
/* "stdio", "http" (Streamable HTTP) or "sse" (legacy). */
MCP_EXTERN const char	*mcp_client_transport(mcp_client *c);

/* Any request, blocking: PARAMS stolen (NULL: none), *RESULT a new
 * reference, also on failure (see above). Any thread but the loop's. */
MCP_EXTERN int		 mcp_client_request_new(mcp_client *c,
			    const char *method, json_t *params,
			    json_t **result);
/* The same, asynchronous: CB runs once, on the loop thread. *IDP (may be
 * NULL) gets the request's id, for mcp_client_cancel. */
MCP_EXTERN int		 mcp_client_request_async_new(mcp_client *c,
			    const char *method, json_t *params,
			    mcp_client_cb cb, void *udata, long long *idp);
/* Ends a request: its callback gets MCP_ECANCELED and the server gets
 * notifications/cancelled with REASON (may be NULL). */
MCP_EXTERN int		 mcp_client_cancel(mcp_client *c, long long id,
			    const char *reason);
/* Ends every request in flight, as mcp_client_cancel each: blocking
 * calls return MCP_ECANCELED. Any thread, a signal-handling one too. */
MCP_EXTERN int		 mcp_client_cancel_all(mcp_client *c,
			    const char *reason);
MCP_EXTERN int		 mcp_client_notify_new(mcp_client *c,
			    const char *method, json_t *params);

/* The usual requests, blocking. The lists follow nextCursor to the end
 * and give the whole array (tools, resources, resourceTemplates or
 * prompts). ARGS are stolen (NULL: none). */
MCP_EXTERN int		 mcp_client_list_tools(mcp_client *c, json_t **tools);
MCP_EXTERN int		 mcp_client_list_resources(mcp_client *c,
			    json_t **resources);
MCP_EXTERN int		 mcp_client_list_templates(mcp_client *c,
			    json_t **templates);
MCP_EXTERN int		 mcp_client_list_prompts(mcp_client *c,
			    json_t **prompts);
MCP_EXTERN int		 mcp_client_call_tool_new(mcp_client *c,
			    const char *name, json_t *args, json_t **result);
MCP_EXTERN int		 mcp_client_read_resource(mcp_client *c,
			    const char *uri, json_t **result);
MCP_EXTERN int		 mcp_client_get_prompt_new(mcp_client *c,
			    const char *name, json_t *args, json_t **result);
/* completion/complete: REF is {"type":"ref/prompt","name":...} or
 * {"type":"ref/resource","uri":...} (stolen); *RESULT the completion. */
MCP_EXTERN int		 mcp_client_complete_new(mcp_client *c, json_t *ref,
			    const char *arg, const char *value,
			    json_t **result);
MCP_EXTERN int		 mcp_client_ping(mcp_client *c);
MCP_EXTERN int		 mcp_client_set_log_level(mcp_client *c,
			    const char *level);
/* resources/subscribe and /unsubscribe; in 2026-07-28 a new
 * subscriptions/listen with the URIs, acknowledged before the old one
 * closes (mcp_client_new(3), Protocol eras). */
MCP_EXTERN int		 mcp_client_subscribe(mcp_client *c, const char *uri);
MCP_EXTERN int		 mcp_client_unsubscribe(mcp_client *c,
			    const char *uri);

/* ---- Logging ---------------------------------------------------------- */

#define MCP_LOG_ERR	0
#define MCP_LOG_WARN	1
#define MCP_LOG_NOTICE	2
#define MCP_LOG_INFO	3
#define MCP_LOG_DEBUG	4

/* One line on stderr, "time mcp[pid]: level: [id] message", written with
 * a single write(2). Filtered by level before formatting; never writes
 * to stdout. Inside a callback the request id is added. Any thread. */
MCP_EXTERN void		 mcp_log(int level, const char *fmt, ...)
			    MCP_PRINTF(2, 3);
MCP_EXTERN void		 mcp_logv(int level, const char *fmt, va_list ap);
/* The process log level (default MCP_LOG_NOTICE). Any thread. */
MCP_EXTERN void		 mcp_log_set_level(int level);
MCP_EXTERN int		 mcp_log_get_level(void);
/* "err", "warn", "notice", "info", "debug" (or 0-4) to a level; -1 if
 * unknown. */
MCP_EXTERN int		 mcp_log_level_parse(const char *s);

#ifdef __cplusplus
}
#endif

#endif /* MCP_H */
