/*
 * sdrun: what systemd does for a socket unit and its Type=notify
 * service, for test/service.mjs, without systemd:
 *
 *   sdrun [-w WATCHDOG_USEC] [-n NAME] -- PROGRAM [ARGS...]
 *
 * It binds a TCP socket on 127.0.0.1 (an ephemeral port) and listens,
 * as the .socket unit does, and makes a notify socket (a datagram
 * socket in a fresh directory). It starts PROGRAM the way systemd
 * starts a service: the listening socket as fd 3, LISTEN_FDS=1,
 * LISTEN_PID set to the service's own pid (after the fork, before the
 * exec), LISTEN_FDNAMES=NAME, NOTIFY_SOCKET, and WATCHDOG_USEC with
 * WATCHDOG_PID when -w is given.
 *
 * On stdout, one line each:
 *   port N             once listening
 *   start PID          a service process started
 *   notify PID TEXT    a datagram on the notify socket (newlines as |)
 *   exit PID STATUS    the service exited (STATUS: its code, or -SIGNAL)
 * SIGUSR1 restarts the service as `systemctl restart` does: SIGTERM to
 * it, wait for its exit, start a new one on the same socket, which the
 * whole time holds connections that are not yet accepted. SIGTERM or
 * SIGINT stops the service and then sdrun. sdrun exits when the service
 * exits on its own.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t restart_asked, stop_asked;

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		restart_asked = 1;
	else
		stop_asked = 1;
}

static pid_t
start(int lfd, const char *notify, const char *name, const char *wd,
    char **argv)
{
	char	 buf[32];
	pid_t	 pid;

	pid = fork();
	if (pid != 0)
		return pid;
	if (lfd != 3) {
		dup2(lfd, 3);
		close(lfd);
	}
	snprintf(buf, sizeof(buf), "%ld", (long)getpid());
	setenv("LISTEN_PID", buf, 1);
	setenv("LISTEN_FDS", "1", 1);
	setenv("LISTEN_FDNAMES", name, 1);
	setenv("NOTIFY_SOCKET", notify, 1);
	if (wd != NULL) {
		setenv("WATCHDOG_USEC", wd, 1);
		setenv("WATCHDOG_PID", buf, 1);
	}
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	execvp(argv[0], argv);
	fprintf(stderr, "sdrun: %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Prints what came on the notify socket. */
static void
drain_notify(int nfd)
{
	char		 msg[4096];
	struct ucred	*cred;
	struct msghdr	 mh;
	struct iovec	 iov;
	union {
		struct cmsghdr	 h;
		char		 b[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	ssize_t		 n;
	long		 pid;
	int		 i;

	for (;;) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = msg;
		iov.iov_len = sizeof(msg) - 1;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = &ctl;
		mh.msg_controllen = sizeof(ctl);
		n = recvmsg(nfd, &mh, MSG_DONTWAIT);
		if (n < 0)
			return;
		msg[n] = '\0';
		for (i = 0; i < n; i++)
			if (msg[i] == '\n')
				msg[i] = '|';
		pid = -1;
		if (CMSG_FIRSTHDR(&mh) != NULL &&
		    CMSG_FIRSTHDR(&mh)->cmsg_type == SCM_CREDENTIALS) {
			cred = (struct ucred *)CMSG_DATA(CMSG_FIRSTHDR(&mh));
			pid = cred->pid;
		}
		printf("notify %ld %s\n", pid, msg);
		fflush(stdout);
	}
}

int
main(int argc, char **argv)
{
	struct sockaddr_in	 sin;
	struct sockaddr_un	 sun;
	struct sigaction	 sa;
	struct pollfd		 pfd;
	socklen_t		 len = sizeof(sin);
	char			 dir[] = "/tmp/sdrun.XXXXXX", notify[96];
	const char		*wd = NULL, *name = "http";
	pid_t			 pid, w;
	int			 lfd, nfd, ch, status, one = 1;

	while ((ch = getopt(argc, argv, "w:n:")) != -1) {
		switch (ch) {
		case 'w':
			wd = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		default:
			return 2;
		}
	}
	argv += optind;
	if (argv[0] == NULL) {
		fprintf(stderr, "usage: sdrun [-w USEC] [-n NAME] -- PROGRAM "
		    "[ARGS...]\n");
		return 2;
	}
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(lfd, 4096) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &len) != 0) {
		perror("sdrun: listen");
		return 1;
	}
	if (mkdtemp(dir) == NULL) {
		perror("sdrun: mkdtemp");
		return 1;
	}
	snprintf(notify, sizeof(notify), "%s/notify", dir);
	nfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", notify);
	if (nfd < 0 || bind(nfd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		perror("sdrun: notify socket");
		return 1;
	}
	setsockopt(nfd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("port %u\n", ntohs(sin.sin_port));
	fflush(stdout);
	pid = start(lfd, notify, name, wd, argv);
	printf("start %ld\n", (long)pid);
	fflush(stdout);
	for (;;) {
		pfd.fd = nfd;
		pfd.events = POLLIN;
		poll(&pfd, 1, 50);
		drain_notify(nfd);
		if (restart_asked || stop_asked) {
			kill(pid, SIGTERM);
			while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
				;
		} else if ((w = waitpid(pid, &status, WNOHANG)) == 0)
			continue;
		drain_notify(nfd);
		printf("exit %ld %d\n", (long)pid, WIFEXITED(status) ?
		    WEXITSTATUS(status) : -WTERMSIG(status));
		fflush(stdout);
		if (!restart_asked || stop_asked)
			break;
		restart_asked = 0;
		pid = start(lfd, notify, name, wd, argv);
		printf("start %ld\n", (long)pid);
		fflush(stdout);
	}
	unlink(notify);
	rmdir(dir);
	return 0;
}
