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
 * one whose process cannot be examined. */
#include "commands.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../segment_reader.h"

static void gc_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch gc [--dry-run] [DIR]\n"
	        "\n"
	        "Removes what dead processes of this host left under DIR (default\n"
	        "$NCCLWATCH_DIR, else /dev/shm/ncclwatch-$UID): their segment files\n"
	        "(DIR/<job>/<host>.<pid>.seg) and dumps (*.dump.seg), then, in each job\n"
	        "directory where no segment file remains, ncclwatch's own files (control,\n"
	        "report.lock, report.txt, request) and the directory if it is then empty.\n"
	        "\n"
	        "A segment is never removed when its process may still run: same host, and\n"
	        "its pid exists, has not exited, and is the same process (its start time is\n"
	        "the one the segment records, or it maps the file; for a segment of format\n"
	        "1.0/1.1, which records none: it started before the segment was created).\n"
	        "Files of other hosts (in a shared dump directory), files being created and\n"
	        "unreadable files are never touched.\n"
	        "\n"
	        "  -n, --dry-run   say what would be removed, remove nothing\n"
	        "  -h, --help      this text\n"
	        "\n"
	        "Output: one line per file or directory removed, \"removed PATH\" (\"would\n"
	        "remove PATH\" with --dry-run), then \"gc: N removed, N kept (N live, N other\n"
	        "hosts, N unreadable)\".\n"
	        "\n"
	        "Exit status: 0 ok (also when nothing was found); 2 usage error, DIR missing,\n"
	        "or a file that could not be removed (one line on stderr each).\n");
}

/* ---- the walk ---- */

struct gc {
	int dry_run;
	int status;
	char host[NW_SEG_HOST_LEN];
	char **removed;              /* paths removed (or that would be) */
	size_t nremoved, cap;
	size_t live, other_host, unreadable;
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

static void remove_file(struct gc *g, const char *path)
{
	if (!g->dry_run && unlink(path) != 0) {
		if (errno == ENOENT)
			return;                  /* gone meanwhile */
		fprintf(stderr, "ncclwatch gc: %s: %s\n", path, strerror(errno));
		g->status = NW_EXIT_USAGE;
		return;
	}
	printf("%s %s\n", g->dry_run ? "would remove" : "removed", path);
	note_removed(g, path);
}

static void consider_segment(struct gc *g, const char *path)
{
	struct nw_segment seg;
	struct nw_read_error err;
	if (nw_segment_read(path, NW_READ_SKIP_RING | NW_READ_NO_WAIT, &seg, &err) != NW_READ_OK) {
		g->unreadable++;             /* being created, foreign, damaged: not ours to judge */
		return;
	}
	if (strncmp(seg.header.host, g->host, sizeof seg.header.host) != 0)
		g->other_host++;
	else if (nw_segment_writer_state(&seg.header, path) != NW_WRITER_GONE)
		g->live++;
	else
		remove_file(g, path);
	nw_segment_free(&seg);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A job directory: if no segment file remains, remove ncclwatch's own
 * files, then the directory itself if empty (unless it is DIR). */
static void clean_job_dir(struct gc *g, const char *dir, int is_top)
{
	static const char *const own[] = { "control", "report.lock", "report.txt", "request" };
	DIR *d = opendir(dir);
	if (!d)
		return;
	int segments = 0, others = 0, owned = 0;
	struct dirent *e;
	char path[PATH_MAX];
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) {
			others++;
			continue;
		}
		if (ends_with(e->d_name, ".seg")) {
			if (!was_removed(g, path))
				segments++;
			continue;
		}
		int ours = 0;
		for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
			ours |= !strcmp(e->d_name, own[i]);
		struct stat st;
		if (ours && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
			owned++;
		else
			others++;
	}
	closedir(d);
	if (segments || (is_top && !owned))
		return;
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
		struct stat st;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, own[i]) < sizeof path && lstat(path, &st) == 0
		    && S_ISREG(st.st_mode))
			remove_file(g, path);
	}
	if (is_top || others)
		return;
	if (g->dry_run) {
		printf("would remove %s/\n", dir);
	} else if (rmdir(dir) == 0) {
		printf("removed %s/\n", dir);
	} else if (errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT) {
		fprintf(stderr, "ncclwatch gc: %s: %s\n", dir, strerror(errno));
		g->status = NW_EXIT_USAGE;
	}
}

static int gc_run(int argc, char **argv)
{
	static const struct option options[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gc g;
	memset(&g, 0, sizeof g);
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+nh", options, NULL)) != -1) {
		switch (c) {
		case 'n':
			g.dry_run = 1;
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
	const char *dir = optind < argc ? argv[optind] : nw_default_dir(def, sizeof def);
	struct stat st;
	if (stat(dir, &st) != 0)
		return nw_usage_error("gc", "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return nw_usage_error("gc", "%s: not a directory", dir);
	if (gethostname(g.host, sizeof g.host - 1) != 0)
		return nw_usage_error("gc", "gethostname: %s", strerror(errno));

	struct nw_path_list list = { 0 };
	struct nw_read_error err;
	int rc = nw_segment_list(dir, &list, &err);
	if (rc != NW_READ_OK && rc != NW_READ_ERR_EMPTY) {
		nw_path_list_free(&list);
		return nw_usage_error("gc", "%s", err.message);
	}
	for (size_t i = 0; i < list.count; i++)
		consider_segment(&g, list.paths[i]);
	nw_path_list_free(&list);

	/* Job directories: DIR/<job>/, and DIR itself when it is one. */
	clean_job_dir(&g, dir, 1);
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		char path[PATH_MAX];
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
				continue;
			if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
				clean_job_dir(&g, path, 0);
		}
		closedir(d);
	}
	size_t files = 0;
	for (size_t i = 0; i < g.nremoved; i++)
		files += ends_with(g.removed[i], ".seg");
	printf("gc: %zu %sremoved, %zu kept (%zu live, %zu other hosts, %zu unreadable)\n", files,
	       g.dry_run ? "would be " : "", g.live + g.other_host + g.unreadable, g.live, g.other_host,
	       g.unreadable);
	for (size_t i = 0; i < g.nremoved; i++)
		free(g.removed[i]);
	free(g.removed);
	if (fflush(stdout) != 0)
		g.status = NW_EXIT_USAGE;
	return g.status;
}

const struct nw_command nw_cmd_gc = {
	.name = "gc",
	.summary = "remove the segments and dumps dead processes of this host left",
	.help = gc_help,
	.run = gc_run,
};
