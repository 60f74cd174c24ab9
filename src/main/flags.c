/*
 * flags.c: the application's own flags (mcp_server_add_flag(3)): their
 * table, the names of their environment variables, and the getters. The
 * table is written on the setup thread, by the registrations and then
 * by mcp_server_main (cli.c) before the loop starts; from then on it is
 * only read, so the getters take no lock and run on any thread: the
 * workers are started after the values were set, which orders the
 * writes before their reads.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "main/main.h"

int
mcp__flag_bool(const char *s)
{
	if (s == NULL)
		return -1;
	if (strcmp(s, "1") == 0 || strcasecmp(s, "true") == 0 ||
	    strcasecmp(s, "yes") == 0)
		return 1;
	if (strcmp(s, "0") == 0 || strcasecmp(s, "false") == 0 ||
	    strcasecmp(s, "no") == 0)
		return 0;
	return -1;
}

/* V as a value of TYPE into *NUM (0 for a string); MCP_EINVAL if not. */
static int
parse(int type, const char *v, long long *num)
{
	char		*end;
	long long	 n;
	int		 b;

	*num = 0;
	switch (type) {
	case MCP_FLAG_STR:
		return MCP_OK;
	case MCP_FLAG_INT:
		errno = 0;
		n = strtoll(v, &end, 10);
		if (errno != 0 || end == v || *end != '\0' ||
		    isspace((unsigned char)*v))
			return MCP_EINVAL;
		*num = n;
		return MCP_OK;
	case MCP_FLAG_BOOL:
		b = mcp__flag_bool(v);
		if (b < 0)
			return MCP_EINVAL;
		*num = b;
		return MCP_OK;
	}
	return MCP_EINVAL;
}

int
mcp__flag_set(struct appflag *f, const char *v)
{
	long long	 num;
	char		*p;

	if (parse(f->type, v, &num) != MCP_OK)
		return MCP_EINVAL;
	p = strdup(v);
	if (p == NULL)
		return MCP_ENOMEM;
	free(f->val);
	f->val = p;
	f->num = num;
	return MCP_OK;
}

void
mcp__env_name(const char *prefix, const char *name, char *out)
{
	const char	*s;
	size_t		 n = 0;

	for (s = prefix; *s != '\0' && n < MCP_FLAG_NAME_MAX; s++)
		out[n++] = isalnum((unsigned char)*s) ?
		    (char)toupper((unsigned char)*s) : '_';
	if (n > 0)
		out[n++] = '_';
	for (s = name; *s != '\0' && n < MCP_ENV_NAME_MAX - 1; s++)
		out[n++] = isalnum((unsigned char)*s) ?
		    (char)toupper((unsigned char)*s) : '_';
	out[n] = '\0';
}

void
mcp__flag_env(struct host *host, const struct appflag *f, char *out)
{
	if (f->env_set) {
		out[0] = '\0';
		if (f->env != NULL) {
			strncpy(out, f->env, MCP_ENV_NAME_MAX - 1);
			out[MCP_ENV_NAME_MAX - 1] = '\0';
		}
		return;
	}
	mcp__env_name(host->env_prefix != NULL ? host->env_prefix :
	    host->srv.name, f->name, out);
}

static struct appflag *
find(struct mcp_server *srv, const char *name)
{
	struct host	*host = mcp__host(srv);
	int		 i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < host->nflags; i++)
		if (strcmp(host->flags[i].name, name) == 0)
			return &host->flags[i];
	return NULL;
}

/* Lower-case letters, digits and '-', a letter first, at most 64. */
static int
valid_name(const char *name)
{
	const char	*s;

	if (name == NULL || !islower((unsigned char)name[0]) ||
	    strlen(name) > MCP_FLAG_NAME_MAX)
		return 0;
	for (s = name; *s != '\0'; s++)
		if (!islower((unsigned char)*s) &&
		    !isdigit((unsigned char)*s) && *s != '-')
			return 0;
	return 1;
}

static void
flag_free(struct appflag *f)
{
	free(f->name);
	free(f->help);
	free(f->def);
	free(f->val);
	free(f->env);
}

static int
flag_add(mcp_server *srv, const char *name, int type,
    const char *def, const char *help)
{
	struct host	*host;
	struct appflag	*p, f;
	int		 base = type & ~MCP_FLAG_REQUIRED;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (srv->running)
		return MCP_ESTATE;
	host = mcp__host(srv);
	if (!valid_name(name)) {
		mcp_log(MCP_LOG_ERR, "mcp_server_add_flag: \"%s\" is no flag "
		    "name (a-z, 0-9 and -, a letter first)",
		    name != NULL ? name : "(null)");
		return MCP_EINVAL;
	}
	if (mcp__cli_is_std(name) || find(srv, name) != NULL) {
		mcp_log(MCP_LOG_ERR, "mcp_server_add_flag: --%s exists", name);
		return MCP_EEXIST;
	}
	memset(&f, 0, sizeof(f));
	f.type = base;
	f.required = (type & MCP_FLAG_REQUIRED) != 0;
	if (base != MCP_FLAG_STR && base != MCP_FLAG_INT &&
	    base != MCP_FLAG_BOOL) {
		mcp_log(MCP_LOG_ERR, "mcp_server_add_flag: --%s: bad type %d",
		    name, type);
		return MCP_EINVAL;
	}
	/* A default would make it never missing; a boolean always has one. */
	if (f.required && (def != NULL || base == MCP_FLAG_BOOL)) {
		mcp_log(MCP_LOG_ERR, "mcp_server_add_flag: --%s: a required "
		    "flag has no default and is no boolean", name);
		return MCP_EINVAL;
	}
	if (def != NULL && parse(base, def, &f.defnum) != MCP_OK) {
		mcp_log(MCP_LOG_ERR, "mcp_server_add_flag: --%s: bad default "
		    "\"%s\"", name, def);
		return MCP_EINVAL;
	}
	f.name = strdup(name);
	f.help = strdup(help != NULL ? help : "");
	if (def != NULL)
		f.def = strdup(def);
	p = realloc(host->flags, (size_t)(host->nflags + 1) * sizeof(*p));
	if (f.name == NULL || f.help == NULL || (def != NULL &&
	    f.def == NULL) || p == NULL) {
		if (p != NULL)
			host->flags = p;
		flag_free(&f);
		return MCP_ENOMEM;
	}
	host->flags = p;
	host->flags[host->nflags++] = f;
	return MCP_OK;
}

/* Letters, digits and '_', at most 64. */
static int
valid_env(const char *s, size_t max)
{
	size_t	 n;

	for (n = 0; s[n] != '\0'; n++)
		if (!isalnum((unsigned char)s[n]) && s[n] != '_')
			return 0;
	return n <= max;
}

static int
set_prefix(mcp_server *srv, const char *prefix)
{
	char	*p;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (srv->running)
		return MCP_ESTATE;
	if (prefix == NULL || !valid_env(prefix, MCP_FLAG_NAME_MAX)) {
		mcp_log(MCP_LOG_ERR, "mcp_server_set_env_prefix: \"%s\": "
		    "letters, digits and _ only", prefix != NULL ? prefix :
		    "(null)");
		return MCP_EINVAL;
	}
	p = strdup(prefix);
	if (p == NULL)
		return MCP_ENOMEM;
	free(mcp__host(srv)->env_prefix);
	mcp__host(srv)->env_prefix = p;
	return MCP_OK;
}

static int
flag_env(mcp_server *srv, const char *name, const char *var)
{
	struct appflag	*f;
	char		*p = NULL;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (srv->running)
		return MCP_ESTATE;
	f = find(srv, name);
	if (f == NULL)
		return MCP_ENOENT;
	if (var != NULL && (var[0] == '\0' ||
	    !valid_env(var, MCP_ENV_NAME_MAX - 1))) {
		mcp_log(MCP_LOG_ERR, "mcp_server_set_flag_env: --%s: \"%s\": "
		    "letters, digits and _ only", name, var);
		return MCP_EINVAL;
	}
	if (var != NULL) {
		p = strdup(var);
		if (p == NULL)
			return MCP_ENOMEM;
	}
	free(f->env);
	f->env = p;
	f->env_set = 1;
	return MCP_OK;
}

/* Flag NAME of TYPE (0: any), or NULL, logged: a bug of the caller's. */
static const struct appflag *
get(mcp_server *srv, const char *name, int type, const char *fn)
{
	const struct appflag	*f;

	if (srv == NULL)
		return NULL;
	f = find(srv, name);
	if (f == NULL)
		mcp_log(MCP_LOG_ERR, "%s: no flag --%s", fn,
		    name != NULL ? name : "(null)");
	else if (type != 0 && f->type != type) {
		mcp_log(MCP_LOG_ERR, "%s: --%s is of another type", fn, name);
		f = NULL;
	}
	return f;
}

const char *
mcp_server_flag_str(mcp_server *srv, const char *name)
{
	const struct appflag	*f;

	f = get(srv, name, 0, "mcp_server_flag_str");
	if (f == NULL)
		return NULL;
	return f->val != NULL ? f->val : f->def;
}

long long
mcp_server_flag_int(mcp_server *srv, const char *name)
{
	const struct appflag	*f;

	f = get(srv, name, MCP_FLAG_INT, "mcp_server_flag_int");
	if (f == NULL)
		return 0;
	return f->val != NULL ? f->num : f->defnum;
}

int
mcp_server_flag_bool(mcp_server *srv, const char *name)
{
	const struct appflag	*f;

	f = get(srv, name, MCP_FLAG_BOOL, "mcp_server_flag_bool");
	if (f == NULL)
		return 0;
	return (int)(f->val != NULL ? f->num : f->defnum);
}

void
mcp__flags_reset(struct host *host)
{
	int	 i;

	for (i = 0; i < host->nflags; i++) {
		free(host->flags[i].val);
		host->flags[i].val = NULL;
		host->flags[i].num = 0;
	}
}

void
mcp__flags_free(struct host *host)
{
	int	 i;

	for (i = 0; i < host->nflags; i++)
		flag_free(&host->flags[i]);
	free(host->flags);
	free(host->env_prefix);
	host->flags = NULL;
	host->nflags = 0;
	host->env_prefix = NULL;
}

/* ---- the setup calls: a failure before the server runs is kept and
 * reported by mcp_server_run and mcp_server_main (mcp__setup_keep) -- */

int
mcp_server_add_flag(mcp_server *srv, const char *name, int type,
    const char *def, const char *help)
{
	return mcp__setup_keep(srv, __func__, name,
	    flag_add(srv, name, type, def, help));
}

int
mcp_server_set_env_prefix(mcp_server *srv, const char *prefix)
{
	return mcp__setup_keep(srv, __func__, NULL,
	    set_prefix(srv, prefix));
}

int
mcp_server_set_flag_env(mcp_server *srv, const char *name, const char *var)
{
	return mcp__setup_keep(srv, __func__, name,
	    flag_env(srv, name, var));
}
