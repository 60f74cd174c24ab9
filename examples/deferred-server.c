/*
 * deferred-server.c: tools whose answers come later, from a thread of
 * the server's own, so that a call that waits holds no worker. This is
 * the shape of a tool that waits on libcurl's multi interface, a
 * database's asynchronous client or a job queue: the callback hands its
 * call over and returns, and whoever gets the result finishes the call.
 *
 *   delay      {ms, text}: answers TEXT after MS milliseconds; half way
 *              it reports progress (when the client asked for it)
 *   remind     {ms, text}: answers at once, and MS milliseconds later
 *              sends TEXT to the caller's session alone, as a log
 *              message, whether or not a call of its is running then
 *   broadcast  {text, level}: a log message to every session
 *   echo       {text}: answered by the worker, as tools usually are
 *
 * One timer thread keeps the work in a list sorted by time. It wakes at
 * the next deadline, or every 100 ms while calls wait, to see whether
 * one was cancelled (by the client, the tool time limit or the
 * shutdown): a cancelled call is finished at once, its answer dropped by
 * the library. mcp_server_run returns only once every deferred call has
 * been finished, so the thread outlives the server's run and is stopped
 * after it.
 *
 *   deferred-server --stdio --workers 1     (or --http 127.0.0.1:8080)
 *
 * Built by the Makefile as build/deferred-server; test/deferred.sh runs
 * it. Uses the public API only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcp.h>

/* A piece of the timer thread's work, due AT. */
struct job {
	struct job	*next;
	struct timespec	 at;
	mcp_call	*call;		/* delay: the deferred call */
	int		 halfway;	/* delay: progress due, then the end */
	long long	 ms;		/* delay: the second half */
	char		*session;	/* remind: whom to tell */
	char		*text;		/* remind */
};

static mcp_server	*srv;
static pthread_mutex_t	 lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 cond;		/* on CLOCK_MONOTONIC */
static struct job	*jobs;		/* by time, under lock */
static int		 stopping;	/* under lock */

static const char delay_schema[] =
    "{\"type\":\"object\",\"required\":[\"ms\"],\"properties\":{"
    "\"ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":600000},"
    "\"text\":{\"type\":\"string\"}}}";
static const char broadcast_schema[] =
    "{\"type\":\"object\",\"required\":[\"text\"],\"properties\":{"
    "\"text\":{\"type\":\"string\"},"
    "\"level\":{\"enum\":[\"err\",\"warn\",\"notice\",\"info\","
    "\"debug\"]}}}";
static const char echo_schema[] =
    "{\"type\":\"object\",\"required\":[\"text\"],\"properties\":{"
    "\"text\":{\"type\":\"string\"}}}";

static void
later(struct timespec *at, long long ms)
{
	clock_gettime(CLOCK_MONOTONIC, at);
	at->tv_sec += ms / 1000;
	at->tv_nsec += (ms % 1000) * 1000000;
	if (at->tv_nsec >= 1000000000) {
		at->tv_sec++;
		at->tv_nsec -= 1000000000;
	}
}

static int
before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	    (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Lock held: J into the list, by time; the thread may sleep less now. */
static void
schedule(struct job *j)
{
	struct job	**p;

	for (p = &jobs; *p != NULL && !before(&j->at, &(*p)->at);
	    p = &(*p)->next)
		;
	j->next = *p;
	*p = j;
	pthread_cond_signal(&cond);
}

static void
job_free(struct job *j)
{
	free(j->session);
	free(j->text);
	free(j);
}

/* The timer thread's part of a job, without the lock. */
static void
run(struct job *j)
{
	int	 rc;

	if (j->call != NULL && mcp_call_cancelled(j->call)) {
		/* Finished all the same: that frees it; nothing is sent. */
		mcp_log(MCP_LOG_INFO, "delay: cancelled, finishing it now");
		mcp_call_finish(j->call);
		job_free(j);
		return;
	}
	if (j->call != NULL && j->halfway) {
		mcp_call_progress(j->call, 1, 2, "half way");
		j->halfway = 0;
		later(&j->at, j->ms);
		pthread_mutex_lock(&lock);
		schedule(j);
		pthread_mutex_unlock(&lock);
		return;
	}
	if (j->call != NULL) {
		mcp_result_text(j->call, j->text != NULL ? j->text : "done");
		mcp_call_finish(j->call);
	} else {
		rc = mcp_server_log_to(srv, j->session, MCP_LOG_NOTICE,
		    "reminder", "%s", j->text);
		if (rc != MCP_OK)
			mcp_log(MCP_LOG_INFO, "reminder for session %s: %s",
			    j->session, mcp_strerror(rc));
	}
	job_free(j);
}

/* Lock held: the first job that is due, or whose call was cancelled. */
static struct job *
take(void)
{
	struct job	**p, *j;
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (p = &jobs; *p != NULL; p = &(*p)->next) {
		j = *p;
		if (!before(&now, &j->at) ||
		    (j->call != NULL && mcp_call_cancelled(j->call))) {
			*p = j->next;
			return j;
		}
	}
	return NULL;
}

static void *
timer_main(void *arg)
{
	struct timespec	 until;
	struct job	*j;
	int		 calls;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		if ((j = take()) != NULL) {
			pthread_mutex_unlock(&lock);
			run(j);
			pthread_mutex_lock(&lock);
			continue;
		}
		/* Stopped: mcp_server_run has returned, so no call is left,
		 * and reminders have no session to go to. */
		if (stopping)
			break;
		calls = 0;
		for (j = jobs; j != NULL; j = j->next)
			calls += j->call != NULL;
		if (jobs == NULL)
			pthread_cond_wait(&cond, &lock);
		else {
			later(&until, calls > 0 ? 100 : 60000);
			if (before(&jobs->at, &until))
				until = jobs->at;
			pthread_cond_timedwait(&cond, &lock, &until);
		}
	}
	while ((j = jobs) != NULL) {
		jobs = j->next;
		job_free(j);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* delay: the call goes to the timer thread; this worker is free. */
static void
delay(mcp_call *call)
{
	struct job	*j;
	json_int_t	 ms;
	const char	*text = NULL;

	if (mcp_args_unpack(call, "{s:I, s?s}", "ms", &ms, "text", &text) !=
	    MCP_OK)
		return;
	j = calloc(1, sizeof(*j));
	if (j == NULL || (text != NULL && (j->text = strdup(text)) == NULL)) {
		free(j);
		mcp_result_error(call, "out of memory");
		return;
	}
	/* The arguments would last until the call is finished; a copy
	 * keeps the job the same for both kinds. */
	j->call = call;
	j->halfway = mcp_call_progress_token(call) != NULL;
	j->ms = j->halfway ? ms - ms / 2 : 0;
	later(&j->at, j->halfway ? ms / 2 : ms);
	mcp_call_defer(call);
	/* From here on the timer thread may finish the call at any moment:
	 * this callback does not touch it again. */
	pthread_mutex_lock(&lock);
	schedule(j);
	pthread_mutex_unlock(&lock);
}

/* remind: answered now; the reminder goes later, by session id. */
static void
remind(mcp_call *call)
{
	struct job	*j;
	json_int_t	 ms;
	const char	*text = "reminder";

	if (mcp_args_unpack(call, "{s:I, s?s}", "ms", &ms, "text", &text) !=
	    MCP_OK)
		return;
	j = calloc(1, sizeof(*j));
	if (j == NULL || (j->session = strdup(mcp_call_session_id(call))) ==
	    NULL || (j->text = strdup(text)) == NULL) {
		if (j != NULL)
			job_free(j);
		mcp_result_error(call, "out of memory");
		return;
	}
	/* Before the job is the timer thread's, which may free it at once. */
	mcp_result_textf(call, "reminder for session %s in %lld ms",
	    j->session, (long long)ms);
	later(&j->at, ms);
	pthread_mutex_lock(&lock);
	schedule(j);
	pthread_mutex_unlock(&lock);
}

static void
broadcast(mcp_call *call)
{
	const char	*text, *level = "notice";
	int		 rc;

	if (mcp_args_unpack(call, "{s:s, s?s}", "text", &text, "level",
	    &level) != MCP_OK)
		return;
	rc = mcp_server_log(srv, mcp_log_level_parse(level), "broadcast",
	    "%s", text);
	mcp_result_textf(call, "broadcast: %s", mcp_strerror(rc));
}

static void
echo(mcp_call *call)
{
	const char	*text;

	if (mcp_args_unpack(call, "{s:s}", "text", &text) == MCP_OK)
		mcp_result_text(call, text);
}

int
main(int argc, char *argv[])
{
	pthread_condattr_t	 ca;
	pthread_t		 timer;
	int			 rc;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cond, &ca);
	pthread_condattr_destroy(&ca);
	srv = mcp_server_new("deferred-server", "1.0.0");
	rc = mcp_tool_register(srv, "delay", "Answers TEXT after MS ms, "
	    "from a timer thread", delay_schema, delay, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "remind", "Sends TEXT to this "
		    "session after MS ms, as a log message", delay_schema,
		    remind, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "broadcast", "A log message to "
		    "every session", broadcast_schema, broadcast, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "echo", "Answers TEXT",
		    echo_schema, echo, NULL, NULL);
	if (rc == MCP_OK && (rc = pthread_create(&timer, NULL, timer_main,
	    NULL)) != 0) {
		mcp_log(MCP_LOG_ERR, "pthread_create: %s", strerror(rc));
		rc = MCP_ESYS;
	}
	if (rc == MCP_OK) {
		rc = mcp_server_main(srv, argc, argv);
		pthread_mutex_lock(&lock);
		stopping = 1;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&lock);
		pthread_join(timer, NULL);
	} else
		mcp_log(MCP_LOG_ERR, "setup: %s", mcp_strerror(rc));
	mcp_server_free(srv);
	pthread_cond_destroy(&cond);
	return rc == MCP_OK ? 0 : rc == MCP_EUSAGE ? 2 : 1;
}
