/*
 * systemd.c: the two systemd interfaces a service needs, without
 * libsystemd: sockets passed by a socket unit (sd_listen_fds(3):
 * LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES, descriptors from 3 on), and
 * state written to the notify socket (sd_notify(3): READY=1,
 * STOPPING=1, WATCHDOG=1). Setup and loop thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/core.h"

#define SD_FIRST_FD	3
#define SD_MAX_FDS	16

static int	 nfds = -1;		/* -1: not read yet */
static char	*fdnames[SD_MAX_FDS];
static int	 taken[SD_MAX_FDS];

/* Reads the environment once, and clears it so children do not see it. */
static void
read_env(void)
{
	const char	*pid, *fds, *names;
	char		*end, *copy, *p, *tok;
	long		 n;
	int		 i;

	if (nfds >= 0)
		return;
	nfds = 0;
	pid = getenv("LISTEN_PID");
	fds = getenv("LISTEN_FDS");
	names = getenv("LISTEN_FDNAMES");
	if (pid == NULL || fds == NULL)
		return;
	n = strtol(pid, &end, 10);
	if (*end != '\0' || n != (long)getpid())
		return;		/* meant for another process */
	n = strtol(fds, &end, 10);
	if (*end != '\0' || n <= 0)
		return;
	/* None is for a child, those past SD_MAX_FDS included. */
	for (i = 0; i < n && i < 1024; i++)
		fcntl(SD_FIRST_FD + i, F_SETFD, FD_CLOEXEC);
	nfds = n > SD_MAX_FDS ? SD_MAX_FDS : (int)n;
	if (names != NULL && (copy = strdup(names)) != NULL) {
		for (i = 0, tok = copy; i < nfds && tok != NULL; i++) {
			if ((p = strchr(tok, ':')) != NULL)
				*p++ = '\0';
			fdnames[i] = strdup(tok);
			tok = p;
		}
		free(copy);
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

/*
 * The passed socket named NAME (FileDescriptorName=), or with NAME NULL
 * the first one not taken that is not named "metrics". -1 (logged, as
 * WHO's, the option that asked) when there is none.
 */
int
mcp__sd_listen_fd(const char *name, const char *who)
{
	int	 i;

	read_env();
	for (i = 0; i < nfds; i++) {
		if (taken[i])
			continue;
		if (name != NULL ? fdnames[i] != NULL &&
		    strcmp(fdnames[i], name) == 0 : fdnames[i] == NULL ||
		    strcmp(fdnames[i], "metrics") != 0) {
			taken[i] = 1;
			return SD_FIRST_FD + i;
		}
	}
	if (nfds == 0)
		mcp_log(MCP_LOG_ERR, "%s systemd: no socket was passed "
		    "(LISTEN_FDS and LISTEN_PID are not set for this "
		    "process)", who);
	else
		mcp_log(MCP_LOG_ERR, "%s systemd: no passed socket is "
		    "named \"%s\"", who, name != NULL ? name : "(any)");
	return -1;
}

/*
 * Sends STATE to $NOTIFY_SOCKET, if set: a datagram to a path, or to an
 * abstract socket ("@name"). Returns 1 sent, 0 not under systemd, -1 on
 * an error (logged).
 */
int
mcp__sd_notify(const char *state)
{
	struct sockaddr_un	 sun;
	const char		*path = getenv("NOTIFY_SOCKET");
	size_t			 n;
	socklen_t		 len;
	int			 fd, rc;

	if (path == NULL || path[0] == '\0')
		return 0;
	n = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sun.sun_path)) {
		mcp_log(MCP_LOG_WARN, "NOTIFY_SOCKET \"%.100s\": not a socket "
		    "path", path);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, n);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	rc = (int)sendto(fd, state, strlen(state), MSG_NOSIGNAL,
	    (struct sockaddr *)&sun, len);
	if (rc < 0)
		mcp_log(MCP_LOG_WARN, "NOTIFY_SOCKET %s: %s", path,
		    strerror(errno));
	close(fd);
	return rc < 0 ? -1 : 1;
}

/* WatchdogSec=: the interval to send WATCHDOG=1 at (half the limit, in
 * seconds), or 0 when no watchdog is asked of this process. */
double
mcp__sd_watchdog(void)
{
	const char	*usec = getenv("WATCHDOG_USEC");
	const char	*pid = getenv("WATCHDOG_PID");
	char		*end;
	double		 us;

	if (usec == NULL)
		return 0;
	if (pid != NULL && strtol(pid, &end, 10) != (long)getpid())
		return 0;
	us = strtod(usec, &end);
	if (*end != '\0' || us <= 0)
		return 0;
	return us / 2e6;
}
