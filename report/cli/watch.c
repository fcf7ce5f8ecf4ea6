/* watch: see watch.h. */
#include "watch.h"

#include "commands.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int nw_watch_seconds(const char *arg, int argc, char **argv, int *optind, double *out)
{
	*out = NW_WATCH_DEFAULT_S;
	if (arg)
		return nw_cli_seconds(arg, out);
	if (*optind < argc) {
		double s;
		const char *next = argv[*optind];
		char *end;
		strtod(next, &end);
		if (*next && !*end) {          /* a number: ours (a path that is a number: ./2) */
			if (nw_cli_seconds(next, &s) != 0)
				return -1;
			*out = s;
			(*optind)++;
		}
	}
	return 0;
}

/* Sleep `seconds`, or less when a signal ends the watch. */
static void nap(double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	while (!stop && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void utc_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The frame on a terminal: each line cleared to its end before its
 * newline, so a shorter line leaves nothing of the last frame behind. */
static int put_in_place(FILE *out, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (fwrite(p, 1, n, out) != n || fputs("\033[K", out) == EOF || (nl && fputc('\n', out) == EOF))
			return -1;
		p += n + (nl != NULL);
	}
	return fputs("\033[J", out) == EOF ? -1 : 0;   /* and nothing below */
}

int nw_watch(const char *cmd, double seconds, nw_watch_frame_fn *frame, void *arg)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;      /* no SA_RESTART: the nap ends at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int tty = isatty(STDOUT_FILENO);
	while (!stop) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		if (!f)
			return nw_usage_error(cmd, "out of memory");
		int rc = frame(arg, f);
		if (fclose(f) != 0) {
			free(text);
			return nw_usage_error(cmd, "out of memory");
		}
		char when[32];
		utc_now(when, sizeof when);
		int bad;
		if (tty) {
			bad = printf("\033[Hncclwatch %s --watch, every %gs (Ctrl-C ends it): %s", cmd, seconds, when) < 0 ||
			      (rc && printf(", exit status %d", rc) < 0) || fputs("\033[K\n", stdout) == EOF ||
			      put_in_place(stdout, text, len) != 0;
		} else {
			bad = printf("# ---- ncclwatch %s --watch: %s ----\n", cmd, when) < 0 ||
			      fwrite(text, 1, len, stdout) != len;
		}
		free(text);
		if (bad || fflush(stdout) != 0) {
			if (stop && errno == EINTR)
				break;
			return nw_usage_error(cmd, "writing the output: %s", strerror(errno ? errno : EIO));
		}
		nap(seconds);
	}
	return NW_EXIT_OK;
}
