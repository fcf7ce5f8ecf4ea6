/* `ncclwatch gc [--dry-run] [DIR]`: removes the segment files (live
 * segments and dumps) that dead processes of this host left under DIR,
 * then the job directories nothing is left in.
 *
 * A file is removed only when all of these hold: it reads as a segment;
 * its header names this host; and its process is gone: no process has its
 * pid, the one that has it has exited (a zombie), or it is another process
 * (the pid was reused: its start time differs from the one the writer put
 * in the header, or, in a 1.0/1.1 file, it started after the segment was
 * created) and does not map the file (nw_segment_writer_state). Anything
 * else is kept: a file of another host, one being created or unreadable,
 * one whose process cannot be examined, one of another user.
 *
 * The walk holds a descriptor of every directory it is in and works
 * relative to it (openat, fstatat, unlinkat; O_NOFOLLOW | O_DIRECTORY):
 * a path is never resolved again, so a component swapped for a symbolic
 * link meanwhile cannot send a removal outside DIR. A file is removed only
 * if the name still holds the inode that was read. */
#include "commands.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../sources/segment_reader.h"
#include "trust.h"
#include "../escape.h"
#include <ncclwatch/prom_file.h>

static void gc_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch gc [--dry-run] [--prom-dir PDIR] [DIR]\n"
	        "\n"
	        "Removes what dead processes of this host left under DIR (default\n"
	        "$NCCLWATCH_DIR, else /dev/shm/ncclwatch-$UID): their segment files\n"
	        "(DIR/<job>/<host>.<pid>.seg) and dumps (*.dump.seg), then, in each job\n"
	        "directory where no segment file remains, ncclwatch's own files (control,\n"
	        "report.lock, report.txt, request, the RAS report attach wrote: ras.json,\n"
	        "ras.txt, and this host's summary the watchdog wrote: <host>.nwsum) and the\n"
	        "directory if it is then empty. Snapshots `attach` wrote\n"
	        "(*.snap.seg) are segment files: removed once their process is gone.\n"
	        "\n"
	        "A segment is never removed when its process may still run: same host, and\n"
	        "its pid exists, has not exited, and is the same process (its start time is\n"
	        "the one the segment records, or it maps the file; for a segment of format\n"
	        "1.0/1.1, which records none: it started before the segment was created).\n"
	        "Files of other hosts (in a shared dump directory), files being created and\n"
	        "unreadable files and files of other users are never touched. The default\n"
	        "directory must be yours and writable by nobody else; symbolic links are\n"
	        "never followed below DIR.\n"
	        "\n"
	        "With --prom-dir PDIR (default $NCCLWATCH_PROM_DIR when set): also the\n"
	        "Prometheus files processes of this host that are gone left in PDIR\n"
	        "(ncclwatch_<host>_<pid>.prom and their temporary .tmp): those a killed\n"
	        "process leaves behind for the NcclwatchRankDead alert, once it was seen.\n"
	        "A file is gone when no process has its pid, the one that has it exited,\n"
	        "or it started after the file was last written (the pid was reused).\n"
	        "\n"
	        "  -n, --dry-run   say what would be removed, remove nothing\n"
	        "      --prom-dir PDIR  also the dead processes' Prometheus files there\n"
	        "  -h, --help      this text\n"
	        "\n"
	        "Output: one line per file or directory removed, \"removed PATH\" (\"would\n"
	        "remove PATH\" with --dry-run), then \"gc: N removed (S segments, F other\n"
	        "files, D directories), N kept (N live, N other hosts, N unreadable, N other\n"
	        "users)\"; N removed is the number of lines before it.\n"
	        "\n"
	        "Exit status: 0 ok (also when nothing was found); 1 a file that could not be\n"
	        "removed (one line on stderr each); 2 usage error, DIR missing, or an\n"
	        "untrusted default directory.\n");
}

/* ---- the walk ---- */

struct gc {
	int dry_run;
	int status;
	uid_t me;
	char host[NW_SEG_HOST_LEN];
	char **removed;              /* paths removed (or that would be) */
	size_t nremoved, cap;
	size_t live, other_host, unreadable, other_user;
	size_t segs, files, dirs;    /* removed (or that would be): segment files, other files,
	                              * directories; one line printed each */
};

static void note_removed(struct gc *g, const char *path)
{
	if (g->nremoved == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		char **r = realloc(g->removed, cap * sizeof *r);
		if (!r)
			return;                  /* only the dry run's directory pass needs it */
		g->removed = r;
		g->cap = cap;
	}
	char *copy = strdup(path);
	if (copy)
		g->removed[g->nremoved++] = copy;
}

static int was_removed(const struct gc *g, const char *path)
{
	for (size_t i = 0; i < g->nremoved; i++)
		if (strcmp(g->removed[i], path) == 0)
			return 1;
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Remove `name` of directory `dfd` (shown as `path`) if it still is the
 * inode `st` describes. */
static void remove_file(struct gc *g, int dfd, const char *name, const char *path, const struct stat *st)
{
	if (!g->dry_run) {
		struct stat now;
		if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_dev != st->st_dev ||
		    now.st_ino != st->st_ino)
			return;                  /* gone or replaced meanwhile: not what we judged */
		if (unlinkat(dfd, name, 0) != 0) {
			if (errno == ENOENT)
				return;
			nw_print_line(stderr, "ncclwatch gc: %s: %s", path, strerror(errno));
			g->status = NW_EXIT_PROBLEM;
			return;
		}
	}
	nw_print_line(stdout, "%s %s", g->dry_run ? "would remove" : "removed", path);
	if (ends_with(path, ".seg"))
		g->segs++;
	else
		g->files++;
	note_removed(g, path);
}

static void consider_segment(struct gc *g, int dfd, const char *name, const char *path)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		g->unreadable++;
		return;
	}
	uid_t who;
	if (nw_cli_foreign_fd(fd, g->me, &who)) {
		g->other_user++;             /* never ours to remove, whatever it says */
		close(fd);
		return;
	}
	struct nw_segment seg;
	struct nw_read_error err;
	int rc = nw_segment_read_fd(fd, path, NW_READ_SKIP_RING | NW_READ_NO_WAIT, &seg, &err);
	close(fd);
	if (rc != NW_READ_OK) {
		g->unreadable++;             /* being created, foreign, damaged: not ours to judge */
		return;
	}
	if (strncmp(seg.header.host, g->host, sizeof seg.header.host) != 0)
		g->other_host++;
	else if (nw_segment_writer_state(&seg.header, path) != NW_WRITER_GONE)
		g->live++;
	else
		remove_file(g, dfd, name, path, &st);
	nw_segment_free(&seg);
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory `dfd`, sorted (a deterministic output); NULL-
 * terminated, malloc'd. */
static char **list_names(int dfd)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	rewinddir(d);                    /* a dup shares the offset of the last pass */
	size_t n = 0, cap = 16;
	char **names = malloc(cap * sizeof *names);
	struct dirent *e;
	while (names && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n + 1 == cap) {
			char **more = realloc(names, (cap *= 2) * sizeof *names);
			if (!more) {
				while (n)
					free(names[--n]);
				free(names);
				names = NULL;
				break;
			}
			names = more;
		}
		if (!(names[n] = strdup(e->d_name)))
			continue;
		n++;
	}
	closedir(d);
	if (!names)
		return NULL;
	names[n] = NULL;
	qsort(names, n, sizeof *names, compare_names);
	return names;
}

static void free_names(char **names)
{
	for (char **p = names; p && *p; p++)
		free(*p);
	free(names);
}

/* A job directory: if no segment file remains, remove ncclwatch's own
 * files, then the directory itself if empty (unless it is DIR): rmdir by
 * its name in `parent`, after checking the name still holds `self`. */
static void clean_job_dir(struct gc *g, int dfd, const char *dir, int parent, const char *name,
                          const struct stat *self)
{
	/* ours, and attach's RAS report: stale once no segment file remains */
	static const char *const own[] = { "control", "report.lock", "report.txt", "request", "ras.json", "ras.txt" };
	/* and <this host>.nwsum, the summary the watchdog that printed the
	 * job's verdict wrote beside its report (watchdog/verdict.c); another
	 * host's summary gathered here is the user's, not ours */
	char summary[300] = "";
	if (gethostname(summary, sizeof summary - 8) == 0) {
		summary[sizeof summary - 8] = 0;
		strcat(summary, ".nwsum");
	}
	char **names = list_names(dfd);
	if (!names)
		return;
	int segments = 0, others = 0, owned = 0;
	char path[PATH_MAX];
	for (char **e = names; *e; e++) {
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, *e) >= sizeof path) {
			others++;
			continue;
		}
		if (ends_with(*e, ".seg")) {
			if (!was_removed(g, path))
				segments++;
			continue;
		}
		int ours = 0;
		for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
			ours |= !strcmp(*e, own[i]);
		ours |= summary[0] && !strcmp(*e, summary);
		struct stat st;
		if (ours && fstatat(dfd, *e, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == g->me)
			owned++;
		else
			others++;
	}
	free_names(names);
	const int is_top = parent < 0;
	if (segments || (is_top && !owned))
		return;
	for (size_t i = 0; i <= sizeof own / sizeof own[0]; i++) {
		const char *f = i < sizeof own / sizeof own[0] ? own[i] : summary;
		struct stat st;
		if (*f && (size_t)snprintf(path, sizeof path, "%s/%s", dir, f) < sizeof path &&
		    fstatat(dfd, f, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_uid == g->me)
			remove_file(g, dfd, f, path, &st);
	}
	if (is_top || others)
		return;
	struct stat now;
	if (g->dry_run) {
		nw_print_line(stdout, "would remove %s/", dir);
		g->dirs++;
	} else if (fstatat(parent, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_dev != self->st_dev ||
	           now.st_ino != self->st_ino) {
		return;                      /* gone or replaced meanwhile */
	} else if (unlinkat(parent, name, AT_REMOVEDIR) == 0) {
		nw_print_line(stdout, "removed %s/", dir);
		g->dirs++;
	} else if (errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT) {
		nw_print_line(stderr, "ncclwatch gc: %s: %s", dir, strerror(errno));
		g->status = NW_EXIT_PROBLEM;
	}
}

/* Directory `dfd` (shown as `dir`): its segment files, its subdirectories
 * while depth > 0 (DIR/<job>/, and dumps one level further), then, for DIR
 * and its job directories, the directory itself. */
static void walk(struct gc *g, int dfd, const char *dir, int depth, int parent, const char *name,
                 const struct stat *self)
{
	char **names = list_names(dfd);
	if (!names)
		return;
	char path[PATH_MAX];
	for (char **e = names; *e; e++) {
		if ((*e)[0] == '.' || (size_t)snprintf(path, sizeof path, "%s/%s", dir, *e) >= sizeof path)
			continue;
		struct stat st;
		if (fstatat(dfd, *e, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISREG(st.st_mode) && ends_with(*e, ".seg")) {
			consider_segment(g, dfd, *e, path);
		} else if (S_ISDIR(st.st_mode) && depth > 0) {
			int sub = openat(dfd, *e, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			struct stat sst;
			/* The directory opened must be the one looked at. */
			if (sub >= 0 && fstat(sub, &sst) == 0 && sst.st_dev == st.st_dev && sst.st_ino == st.st_ino)
				walk(g, sub, path, depth - 1, parent < 0 ? dfd : -2, *e, &sst);
			if (sub >= 0)
				close(sub);
		}
	}
	free_names(names);
	/* DIR (parent -1) and its job directories (a real parent descriptor). */
	if (parent != -2)
		clean_job_dir(g, dfd, dir, parent, name, self);
}

/* ---- Prometheus files (watchdog/prom.c writes them) ---- */

/* When process `pid` started (Unix time, seconds), 0 when it has none or
 * is a zombie (exited: its writer is gone). */
static double started_at(long pid)
{
	char state;
	unsigned long long ticks, btime = 0;
	if (nw_proc_stat(pid, &state, &ticks) != 0 || state == 'Z')
		return 0;
	char buf[256];
	FILE *f = fopen("/proc/stat", "re");
	if (f) {
		while (fgets(buf, sizeof buf, f))
			if (sscanf(buf, "btime %llu", &btime) == 1)
				break;
		fclose(f);
	}
	return (double)btime + (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

/* A file name of ours for this host: its writer's pid, else 0. */
static long prom_pid(const char *name, const char *host)
{
	const char *p = name;
	if (*p == '.')
		p++;                        /* the temporary name: ".NAME.tmp" */
	size_t hl = strlen(host);
	if (strncmp(p, "ncclwatch_", 10) || strncmp(p + 10, host, hl) || p[10 + hl] != '_')
		return 0;
	char *end;
	long pid = strtol(p + 11 + hl, &end, 10);
	if (pid <= 0 || end == p + 11 + hl)
		return 0;
	return strcmp(end, name[0] == '.' ? ".prom.tmp" : ".prom") ? 0 : pid;
}

static void gc_prom(struct gc *g, const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		nw_print_line(stderr, "ncclwatch gc: --prom-dir %s: %s", dir, strerror(errno));
		g->status = NW_EXIT_PROBLEM;
		return;
	}
	char host[NW_SEG_HOST_LEN];
	nw_prom_file_host(g->host, host, sizeof host);
	char **names = list_names(dfd);
	for (size_t i = 0; names && names[i]; i++) {
		long pid = prom_pid(names[i], host);
		struct stat st;
		if (!pid || fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;                /* not one of this host's files */
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		double start = started_at(pid);
		if (st.st_uid != g->me)
			g->other_user++;
		else if (start > 0 && start <= (double)st.st_mtim.tv_sec + 1)
			g->live++;               /* its pid runs and may be its writer */
		else
			remove_file(g, dfd, names[i], path, &st);
	}
	free_names(names);
	close(dfd);
}

static int gc_run(int argc, char **argv)
{
	static const struct option options[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "prom-dir", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gc g;
	memset(&g, 0, sizeof g);
	g.me = getuid();
	int c;
	const char *prom_dir = getenv("NCCLWATCH_PROM_DIR");
	if (prom_dir && !*prom_dir)
		prom_dir = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+nh", options, NULL)) != -1) {
		switch (c) {
		case 'n':
			g.dry_run = 1;
			break;
		case 'P':
			prom_dir = optarg;
			break;
		case 'h':
			gc_help(stdout);
			return NW_EXIT_OK;
		default:
			return nw_usage_error("gc", "unknown option '%s' (see ncclwatch gc --help)", argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		return nw_usage_error("gc", "one DIR at most (see ncclwatch gc --help)");
	char def[PATH_MAX];
	const char *dir = optind < argc ? argv[optind] : NULL;
	int rc;
	if (!dir && (rc = nw_cli_default_dir("gc", def, sizeof def, NULL, &dir)) != NW_EXIT_OK)
		return rc;
	/* DIR itself as given (a link the caller names is followed: the
	 * caller chose it); the default directory was checked not to be one. */
	int top = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0)
		return nw_usage_error("gc", "%s: %s", dir, errno == ENOTDIR ? "not a directory" : strerror(errno));
	if (gethostname(g.host, sizeof g.host - 1) != 0) {
		close(top);
		return nw_usage_error("gc", "gethostname: %s", strerror(errno));
	}
	char shown[PATH_MAX];
	snprintf(shown, sizeof shown, "%s", dir);
	/* Paths print as DIR/job/file.seg. */
	for (size_t n = strlen(shown); n > 1 && shown[n - 1] == '/'; n--)
		shown[n - 1] = '\0';
	struct stat st;
	if (fstat(top, &st) == 0)
		walk(&g, top, shown, 2, -1, NULL, &st);
	close(top);
	if (prom_dir)
		gc_prom(&g, prom_dir);

	/* Every line printed above is counted: files (segments apart) and directories. */
	printf("gc: %zu %sremoved (%zu segment%s, %zu other file%s, %zu director%s), %zu kept (%zu live, %zu other hosts, "
	       "%zu unreadable, %zu other users)\n",
	       g.segs + g.files + g.dirs, g.dry_run ? "would be " : "", g.segs, g.segs == 1 ? "" : "s", g.files,
	       g.files == 1 ? "" : "s", g.dirs, g.dirs == 1 ? "y" : "ies",
	       g.live + g.other_host + g.unreadable + g.other_user, g.live, g.other_host, g.unreadable, g.other_user);
	for (size_t i = 0; i < g.nremoved; i++)
		free(g.removed[i]);
	free(g.removed);
	if (fflush(stdout) != 0)
		return nw_usage_error("gc", "writing the output: %s", strerror(errno));
	return g.status;
}

const struct nw_command nw_cmd_gc = {
	.name = "gc",
	.summary = "remove the segments and dumps dead processes of this host left",
	.help = gc_help,
	.run = gc_run,
};
