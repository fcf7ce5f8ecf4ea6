# check_records.awk: reads `ncclwatch show` output of nccl-threads segments
# and prints one line per problem (nothing when all is well):
# - a record whose fields do not belong together (count encodes the thread
#   t and iteration i; stream must be (t + 1) << 12 and the comm rank t % COMMS):
#   a torn or mixed record;
# - a (thread, iteration) or (comm, seq) seen twice: a duplicated record.
# Variables: COMMS (comms in the run). At the end prints
# "records N head H" of the last segment block.
/^records / {
	for (i = 1; i <= NF; i++) if ($i ~ /^head=/) { split($i, kv, "="); head = kv[2] }
}
/^  op .* AllReduce / {
	delete f
	for (i = 4; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	t = int(f["count"] / 1000000); it = f["count"] % 1000000
	want = sprintf("0x%x", (t + 1) * 4096)
	split(f["rank"], rk, "/")
	if (f["stream"] != want) print "mixed record (stream " f["stream"] " for thread " t "): " $0
	if (rk[1] != t % COMMS) print "mixed record (comm rank " rk[1] " for thread " t "): " $0
	key = block ":" t ":" it
	if (key in seen) print "duplicate record thread " t " iteration " it
	seen[key] = 1
	skey = block ":" rk[1] ":" f["seq"]
	if (skey in seqs) print "duplicate seq " f["seq"] " on comm rank " rk[1]
	seqs[skey] = 1
	n++
}
/^segment / { block++ }
END { print "records " n " head " head }
