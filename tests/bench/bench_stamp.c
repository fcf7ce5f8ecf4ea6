/* bench_stamp: run a command and timestamp every line it prints, for the
 * detection-latency and CPU benchmarks of `make bench` (tests/bench/).
 *
 * usage: bench-stamp [-m TEXT] [-g GRACE_S] [-t LIMIT_S] [-p PIDFILE] -- CMD [ARG...]
 *
 * CMD runs in a new session (its own process group, pgid = its pid) with
 * stdout and stderr on one pipe. Each line that arrives is printed on our
 * stdout as "SECONDS LINE", SECONDS being the CLOCK_MONOTONIC time at which
 * read(2) returned it, relative to just before the fork (the first line,
 * "0.000000 [stamp] launch pid=N", marks that moment). Lines that arrive in
 * one read share a time: they were already waiting.
 *
 *   -m TEXT     the first line containing TEXT starts the grace period
 *   -g GRACE_S  after it, kill the whole process group (default 1 s)
 *   -t LIMIT_S  kill the group after LIMIT_S anyway (default 60 s)
 *   -p PIDFILE  write CMD's pid (= its process group) there once started
 *
 * The group is killed with SIGKILL when the grace period or the limit ends,
 * when the pipe reaches EOF (CMD and everything holding the pipe ended), and
 * when we get SIGINT/SIGTERM/SIGHUP. The last line says why we stopped:
 * "[stamp] end reason=match|limit|eof|signal status=...". */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal;
static pid_t child = -1;
static double t0;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_signal(int sig)
{
	got_signal = sig;
}

static void kill_group(void)
{
	if (child > 0) {
		kill(-child, SIGKILL);
		kill(child, SIGKILL);       /* in case it had not called setsid() yet */
	}
}

static void emit(double t, const char *line, size_t len)
{
	printf("%.6f %.*s\n", t - t0, (int)len, line);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench-stamp [-m TEXT] [-g GRACE_S] [-t LIMIT_S] [-p PIDFILE] -- CMD [ARG...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *match = NULL, *pidfile = NULL;
	double grace = 1.0, limit = 60.0;
	int opt;
	while ((opt = getopt(argc, argv, "+m:g:t:p:")) != -1) {
		switch (opt) {
		case 'm': match = optarg; break;
		case 'g': grace = atof(optarg); break;
		case 't': limit = atof(optarg); break;
		case 'p': pidfile = optarg; break;
		default: usage();
		}
	}
	if (optind >= argc)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	int fds[2];
	if (pipe(fds) != 0) {
		perror("bench-stamp: pipe");
		return 1;
	}
	/* Block the signals across fork: the child resets them before exec. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	t0 = now_s();
	child = fork();
	if (child < 0) {
		perror("bench-stamp: fork");
		return 1;
	}
	if (child == 0) {
		setsid();
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "bench-stamp: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	setpgid(child, child);              /* no race with the child's setsid */
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	printf("%.6f [stamp] launch pid=%d\n", 0.0, (int)child);
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");
		if (f) {
			fprintf(f, "%d\n", (int)child);
			fclose(f);
		}
	}

	static char buf[1 << 16];
	size_t have = 0;
	double deadline = t0 + limit;
	const char *reason = "eof";
	int matched = 0;
	for (;;) {
		if (got_signal) {
			reason = "signal";
			break;
		}
		double t = now_s();
		if (t >= deadline) {
			reason = matched ? "match" : "limit";
			break;
		}
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		int ms = (int)((deadline - t) * 1000) + 1;
		int r = poll(&p, 1, ms > 200 ? 200 : ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t n = read(fds[0], buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;                      /* EOF: everything that held the pipe ended */
		t = now_s();
		have += (size_t)n;
		size_t start = 0;
		for (size_t i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			emit(t, buf + start, i - start);
			if (match && !matched && memmem(buf + start, i - start, match, strlen(match))) {
				matched = 1;
				if (t + grace < deadline)
					deadline = t + grace;
			}
			start = i + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have == sizeof(buf)) {          /* a line longer than the buffer */
			emit(t, buf, have);
			have = 0;
		}
	}
	if (have)
		emit(now_s(), buf, have);
	kill_group();
	int status = 0;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	close(fds[0]);
	char how[32];
	if (WIFEXITED(status))
		snprintf(how, sizeof(how), "exit%d", WEXITSTATUS(status));
	else
		snprintf(how, sizeof(how), "signal%d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	printf("%.6f [stamp] end reason=%s status=%s\n", now_s() - t0, reason, how);
	return 0;
}
