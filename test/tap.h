/*
 * tap.h: a tiny TAP producer for libmcp's C tests (no framework).
 * Each test binary prints "ok N - name" / "not ok N - name" lines and a
 * closing plan; test/run.sh counts them. Single-threaded use only.
 */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n;
static int tap_failed;

#define diag(...) do { fputs("# ", stdout); printf(__VA_ARGS__); \
	fputs("\n", stdout); } while (0)

static int
ok_(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list	 ap;

	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) ok_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...) do {					\
	long long g_ = (long long)(got), w_ = (long long)(want);	\
	if (!ok(g_ == w_, __VA_ARGS__))					\
		diag("  got %lld, want %lld", g_, w_);			\
} while (0)

#define is_str(got, want, ...) do {					\
	const char *g_ = (got), *w_ = (want);				\
	int eq_ = (g_ == NULL && w_ == NULL) ||				\
	    (g_ != NULL && w_ != NULL && strcmp(g_, w_) == 0);		\
	if (!ok(eq_, __VA_ARGS__))					\
		diag("  got \"%s\", want \"%s\"", g_ ? g_ : "(null)",	\
		    w_ ? w_ : "(null)");				\
} while (0)

/* Prints the plan and returns the exit status for main. */
static int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* TAP_H */
