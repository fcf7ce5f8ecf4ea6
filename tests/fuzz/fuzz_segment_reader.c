/* libFuzzer (and AFL++ -fsanitize=fuzzer compatible) target for the segment
 * reader: any bytes, read as a segment file, must give either a snapshot
 * that renders without fault or a one-line error, never a crash, a leak or
 * undefined behaviour. Built with clang by report/part.mk; corpus in
 * tests/fuzz/corpus/ (small segments from tests/report/mkseg); run by
 * tests/fuzz/test-fuzz-segment-reader.sh for a bounded number of runs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../../report/segment_reader.h"
#include "../../report/cli/show_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static FILE *sink;
	if (fd < 0) {
		fd = memfd_create("fuzz-segment", MFD_CLOEXEC);
		sink = fopen("/dev/null", "w");
		if (fd < 0 || !sink)
			abort();
	}
	if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();

	struct nw_segment seg;
	struct nw_read_error err;
	int rc = nw_segment_read_fd(fd, "fuzz.seg", 0, &seg, &err);
	if (rc == NW_READ_OK) {
		struct nw_show_options all = { .all_records = 1 };
		nw_show_segment(sink, &seg, &all);
		nw_segment_free(&seg);
	} else {
		/* The contract: one line that names the file. */
		if (strncmp(err.message, "fuzz.seg: ", 10) != 0 || strchr(err.message, '\n'))
			abort();
	}
	return 0;
}
