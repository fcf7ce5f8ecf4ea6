#!/bin/sh
# figure 6, `ncclwatch attach` (issue 13): 8 and 64 processes of 8 threads
# each (capture-quiet --eight: threads in timed nanosleep,
# clock_nanosleep, poll, select, epoll_wait, sem_timedwait, recv with
# SO_RCVTIMEO and usleep loops; in the first 2 processes a thread spins in
# user code instead of usleep: more spinners than the 2 cores would starve
# everything, attach included), started without the preload; one `ncclwatch attach --no-verdict --no-python` over all of
# them. Figures: its wall time, the longest any one thread was stopped
# (ptrace, from attach's own lines), and the calls that returned early or
# short, counted by the programs themselves when they end.
# Goal: 64 processes in < 2 s, no thread stopped > 10 ms, no early return.
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${NW_BUILD:=$root/build}"
quiet="$NW_BUILD/tests/capture/capture-quiet"
cli="$NW_BUILD/bin/ncclwatch"
[ -x "$quiet" ] || { echo "bench attach: build first (make all)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nwbench-attach.XXXXXX")
pids=""
trap 'for p in $pids; do kill -KILL $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH="$NW_BUILD/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo
echo "=== figure 6: ncclwatch attach, processes of 8 threads in timed calls (2 spinners in all) ==="
echo "command: ncclwatch attach --no-verdict --no-python -o DIR PID... (once over all of them)"
for n in 8 64; do
	rm -rf "$tmp/run" && mkdir -p "$tmp/run"
	pids=""
	for i in $(seq "$n"); do
		spin=""
		[ "$i" -le 2 ] && spin=--spin
		"$quiet" "$tmp/run/stop" --eight $spin > "$tmp/run/q.$i" 2>&1 &
		pids="$pids $!"
	done
	for i in $(seq "$n"); do
		until grep -q '^ready' "$tmp/run/q.$i" 2>/dev/null; do sleep 0.05; done
	done
	t0=$(date +%s%N)
	# shellcheck disable=SC2086
	"$cli" attach --no-verdict --no-python -o "$tmp/run/snap" $pids > "$tmp/run/attach" 2>&1
	t1=$(date +%s%N)
	touch "$tmp/run/stop"
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=""
	awk -v n="$n" -v ms="$(( (t1 - t0) / 1000000 ))" '
		FILENAME ~ /attach$/ && /^attach: pid/ {
			procs++
			for (i = 1; i <= NF; i++) {
				if ($i == "stacks") stacks += $(i - 1)
				if ($i == "threads,") threads += $(i - 1)
				if ($i == "stopped,") stopped += substr($(i - 1), 2)
				if ($i == "longest") { v = $(i + 1) + 0; if (v > longest) longest = v }
			}
		}
		FILENAME !~ /attach$/ && /^calls=/ { split($1, c, "="); split($2, p, "="); calls += c[2]; early += p[2] }
		END {
			printf "%2d processes: %d attached, %d threads, %d stacks, %d stopped by ptrace; wall %d ms;\n", n, procs, threads, stacks, stopped, ms
			printf "    longest stop of one thread %.3f ms; calls %d, returned early or short %d\n", longest, calls, early
		}' "$tmp/run/attach" "$tmp"/run/q.*
done
echo "goal: 64 processes < 2000 ms, no thread stopped > 10 ms, 0 early returns"

# The window: 8 threads running user code 20 us between 2 ms epoll_wait and
# nanosleep calls (capture-quiet --window), attached 30 times.
rm -rf "$tmp/run" && mkdir -p "$tmp/run"
"$quiet" "$tmp/run/stop" --window > "$tmp/run/q" 2>&1 &
pids=$!
until grep -q '^ready' "$tmp/run/q" 2>/dev/null; do sleep 0.05; done
for i in $(seq 30); do
	"$cli" attach --no-verdict --no-python -o "$tmp/run/snap" $pids | tail -1
done > "$tmp/run/sum"
touch "$tmp/run/stop"
wait $pids 2>/dev/null
pids=""
awk '{ for (i = 1; i <= NF; i++) { if ($i == "stopped") s += $(i - 1); if ($i == "woken") r += $(i - 2)
	if ($i == "(longest") { v = $(i + 1) + 0; if (v > l) l = v } } }
	FILENAME ~ /q$/ && /^calls=/ { split($1, c, "="); split($2, p, "="); calls = c[2]; early = p[2] }
	END { printf "the window: 30 attaches of 8 threads switching between 20 us of user code and 2 ms calls:\n"
	      printf "    %d threads stopped while running (longest %.3f ms), %d calls woken in the window and restarted;\n", s, l, r
	      printf "    calls %d, returned early %d\n", calls, early }' "$tmp/run/sum" "$tmp/run/q"
