/* See trust.h. */
#include "trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ncclwatch/segment.h>
#include "../sources/segment_reader.h"
#include "../sources/fr/fr.h"
#include "commands.h"
#include "../escape.h"

int nw_cli_default_dir(const char *cmd, char *buf, size_t len, const char *missing_hint,
                       const char **dir)
{
	const char *d = nw_default_dir(buf, len);
	struct stat st;
	if (lstat(d, &st) != 0)
		return nw_usage_error(cmd, "%s: %s%s", d, strerror(errno), missing_hint ? missing_hint : "");
	if (S_ISLNK(st.st_mode))
		return nw_usage_error(cmd, "%s: a symbolic link, not a directory: not reading it "
		                      "(another user may have made it; remove it)", d);
	if (!S_ISDIR(st.st_mode))
		return nw_usage_error(cmd, "%s: not a directory", d);
	if (st.st_uid != getuid())
		return nw_usage_error(cmd, "%s: owned by uid %u, not by you (uid %u): not reading it "
		                      "(another user may have made it; remove it)", d, (unsigned)st.st_uid,
		                      (unsigned)getuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return nw_usage_error(cmd, "%s: writable by %s (mode %03o): not reading it "
		                      "(chmod 700 it, or remove it)", d,
		                      (st.st_mode & S_IWOTH) ? "other users" : "its group",
		                      (unsigned)(st.st_mode & 0777));
	*dir = d;
	return NW_EXIT_OK;
}

int nw_cli_foreign_fd(int fd, uid_t me, uid_t *who)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_uid != me) {
		*who = st.st_uid;
		return 1;
	}
	/* The header's uid: only the magic and the field itself are needed. */
	char magic[sizeof ((struct nw_seg_header *)0)->magic];
	uint32_t uid;
	if (pread(fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic &&
	    memcmp(magic, NW_SEG_MAGIC, sizeof magic) == 0 &&
	    pread(fd, &uid, sizeof uid, offsetof(struct nw_seg_header, uid)) == (ssize_t)sizeof uid &&
	    uid != (uint32_t)me) {
		*who = (uid_t)uid;
		return 1;
	}
	return 0;
}

void nw_cli_paths_free(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

static int push(char ***out, size_t *n, size_t *cap, const char *path)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		char **p = realloc(*out, c * sizeof *p);
		if (!p)
			return -1;
		*out = p;
		*cap = c;
	}
	if (!((*out)[*n] = strdup(path)))
		return -1;
	(*n)++;
	return 0;
}

int nw_cli_mine(const char *cmd, const char *const *paths, size_t npaths, int any_owner,
                char ***out, size_t *nout, size_t *skipped)
{
	const uid_t me = getuid();
	size_t cap = 0;
	*out = NULL;
	*nout = *skipped = 0;
	for (size_t i = 0; i < npaths; i++) {
		struct nw_path_list list = { 0 };
		struct nw_read_error err;
		if (nw_input_list(paths[i], &list, &err) != NW_READ_OK) {
			nw_path_list_free(&list);
			if (err.code == NW_READ_ERR_NOMEM || push(out, nout, &cap, paths[i]))
				goto nomem;
			continue;
		}
		for (size_t j = 0; j < list.count; j++) {
			const char *p = list.paths[j];
			uid_t who;
			int fd = any_owner ? -1 : open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
			if (fd >= 0 && nw_cli_foreign_fd(fd, me, &who)) {
				nw_print_line(stderr, "ncclwatch %s: skipped %s: it belongs to uid %u, not to you "
				              "(uid %u; --any-owner reads it)", cmd, p, (unsigned)who, (unsigned)me);
				(*skipped)++;
				close(fd);
				continue;
			}
			if (fd >= 0)
				close(fd);
			if (push(out, nout, &cap, p)) {
				nw_path_list_free(&list);
				goto nomem;
			}
		}
		nw_path_list_free(&list);
	}
	return 0;
nomem:
	nw_cli_paths_free(*out, *nout);
	*out = NULL;
	*nout = 0;
	return -1;
}
