#!/bin/sh
# The --nranks launcher and signals: SIGTERM or SIGINT to the launcher of a
# hung job reaches every rank (each reported killed by that signal, the
# launcher exits 128+signal); a launcher killed outright (SIGKILL) takes its
# ranks along instead of leaving them hung.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

# start_hung_job OUT: 4 ranks, rank 3 idles at step 2, the others hang.
start_hung_job() {
	trainer_start "$1" --nranks 4 --steps 5 --count 16 --bcast-every 0 --verbose --fault skip:rank=3:step=2
	wait_for_line 120 'rank 3 step 2: idling until killed$' "$1"
	wait_for_ranks 120 "$1" ' step 1 done$' 0 1 2
	assert_eq "$(rank_count)" 4 "ranks alive"
}
group_alive() { pgrep -g "$TRAINER_PID" > /dev/null; }

for sig in TERM:15 INT:2; do
	num=${sig#*:} sig=${sig%:*}
	note "SIG$sig to the launcher"
	start_hung_job "$T/$sig.out"
	kill -"$sig" "$TRAINER_PID"
	nw_wait "$TRAINER_PID" 60
	assert_eq "$?" $((128 + num)) "launcher exit status after SIG$sig"
	cat "$T/$sig.out"
	for r in 0 1 2 3; do
		assert_grep "trainer: rank $r \\(pid [0-9]+\\) was killed by signal $num " "$T/$sig.out"
	done
	assert_grep 'trainer: 4 of 4 ranks failed$' "$T/$sig.out"
	nw_until 30 sh -c "! pgrep -g $TRAINER_PID" || fail "ranks outlived the launcher after SIG$sig"
done

note "SIGKILL to the launcher alone"
start_hung_job "$T/kill.out"
kill -KILL "$TRAINER_PID"
nw_until 30 sh -c "! pgrep -g $TRAINER_PID" || { pgrep -a -g "$TRAINER_PID"; fail "ranks outlived a SIGKILLed launcher"; }
wait "$TRAINER_PID" 2>/dev/null
echo "the ranks ended with their launcher"
