/* ring_race_reader: the CLI's reader for test-unit-ring-race, in a file of
 * its own (the reader's struct nw_segment is not the interposer's). */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "../../report/sources/segment_reader.h"
#include "ring_race.h"

long ring_race_snapshot(const char *path, void (*check)(const struct nw_seg_op *op, uint64_t ticket))
{
	struct nw_segment seg;
	struct nw_read_error err;
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return -1;
	}
	int rc = nw_segment_read_fd(fd, path, NW_READ_NO_WAIT, &seg, &err);
	close(fd);
	if (rc != NW_READ_OK) {
		fprintf(stderr, "%s\n", err.message);
		return -1;
	}
	for (size_t i = 0; i < seg.op_count; i++)
		check(&seg.ops[i], nw_op_ticket(&seg.ops[i]));
	long n = (long)seg.op_count;
	nw_segment_free(&seg);
	return n;
}
