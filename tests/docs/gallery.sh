#!/bin/sh
# Prints, as Markdown, one real `ncclwatch diagnose` output per verdict
# kind: the README's "Reading a verdict" section is this script's output
# (`make readme-verdicts` puts it there; tests/docs/test-docs-verdicts.sh
# checks the README still matches what the tool prints). Each case is the
# example trainer on the simulation with 4 ranks under libncclwatch.so and
# a 2 s stall timeout, diagnosed live once the watchdog has reported; the
# two kinds no trainer fault produces come from the scenario corpus's hang
# program (tests/corpus/scenario.c), on the same simulation, and say so.
# Usage: NW_BUILD=build sh tests/docs/gallery.sh > out.md
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${NW_BUILD:=$root/build}"
case "$NW_BUILD" in /*) ;; *) NW_BUILD="$root/$NW_BUILD" ;; esac
trainer="$NW_BUILD/bin/trainer"
cli="$NW_BUILD/bin/ncclwatch"
scenario="$NW_BUILD/tests/corpus/scenario"
for f in "$trainer" "$cli" "$scenario" "$NW_BUILD/lib/libncclwatch.so" "$NW_BUILD/sim/libnccl.so.2"; do
	[ -e "$f" ] || { echo "gallery: $f is missing (make all)" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/nw-gallery.XXXXXX")
job_pid=""
cleanup() {
	[ -n "$job_pid" ] && kill -KILL "-$job_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
export NCCLWATCH_DIR="$work/nw" NCCLWATCH_TIMEOUT=2 NO_COLOR=1
host=$(hostname)

# show TITLE HOW: the diagnosis in $work/out as a Markdown block; stack
# groups are cut after 5 frames.
show() {
	printf '### %s\n\n%s\n\n```\n' "$1" "$2"
	# the host's name as the generated jobs' first host is named
	sed "s|$work/|/tmp/|g; s/\([ (]\)$host\([ ):,]\|$\)/\1node0\2/g" "$work/out" | awk '
		/^  [a-z]+ [0-9,-]+ \([0-9]+\) thread / { frames = 0 }
		/^    #[0-9]+ / { if (++frames == 6) print "    ..."; if (frames > 5) next }
		{ print }'
	printf '```\n\n'
}

# live NAME KIND TITLE [VAR=VALUE...] -- TRAINER-ARGS...: run the job until
# (PROGRAM=path as the first VAR: that program instead of the trainer)
# the watchdog's report.txt holds KIND and every process's dump is in (for
# IDLE, which no watchdog reports: 3.5 s), or until it ends by itself;
# diagnose what is there, kill what is left.
live() {
	name=$1 kind=$2 title=$3
	shift 3
	envs="" prog=$trainer progname=trainer
	case "$1" in PROGRAM=*) prog=${1#PROGRAM=}; progname=$(basename "$prog"); shift ;; esac
	while [ "$1" != -- ]; do envs="$envs $1"; shift; done
	shift
	mkdir -p "$work/sim-$name"
	# shellcheck disable=SC2086
	env NCCLSIM_DIR="$work/sim-$name" NCCLWATCH_JOB="$name" LD_LIBRARY_PATH="$NW_BUILD/sim" \
		LD_PRELOAD="$NW_BUILD/lib/libncclwatch.so" $envs \
		setsid sh -c '"$@" > "$0.log" 2>&1; echo $? > "$0.status"' "$work/$name" "$prog" --nranks 4 "$@" &
	job_pid=$!
	i=0 seen=-1
	while [ $i -lt 300 ] && [ ! -e "$work/$name.status" ]; do
		if [ "$kind" = IDLE ]; then
			[ $i -ge 35 ] && break
		else
			# the verdict, then a dump (with stacks) from every process, or
			# 3 s more (a process may have nothing to dump: a faulted GPU)
			if [ $seen -ge 0 ] || grep -q "^$kind: " "$NCCLWATCH_DIR/$name/report.txt" 2>/dev/null; then
				seen=$((seen + 1))
				[ $seen -ge 30 ] && break
				[ "$(ls "$NCCLWATCH_DIR/$name" | grep -c '\.dump\.seg$')" -ge "$(ls "$NCCLWATCH_DIR/$name" | grep -c '[0-9]\.seg$')" ] &&
					{ sleep 0.5; break; }
			fi
		fi
		sleep 0.1
		i=$((i + 1))
	done
	# nobody is stuck, so nobody asked for stacks: ask as a user would
	[ "$kind" = IDLE ] && "$cli" dump --job "$name" "$NCCLWATCH_DIR" > /dev/null
	"$cli" diagnose --job "$name" "$NCCLWATCH_DIR" > "$work/out" 2>&1
	kill -KILL "-$job_pid" 2>/dev/null
	wait "$job_pid" 2>/dev/null
	job_pid=""
	grep -q "^$kind: " "$work/out" || { cat "$work/$name.log" "$work/out" >&2; echo "gallery: $name did not give $kind" >&2; exit 1; }
	how="\`$(printf '%s ' $envs | sed 's/ $//')${envs:+ }$progname --nranks 4 $*\`"
	[ "$progname" = trainer ] || how="$how: the scenario corpus's hang program (tests/corpus/scenario.c); no fault of the example trainer produces it."
	show "$title" "$how"
}

live missing-rank MISSING_RANK "MISSING_RANK: a rank never called the collective the others wait in" \
	-- --steps 50 --fault skip:rank=1:step=3
live mismatch MISMATCH "MISMATCH: same op number, different arguments (the job ended: every rank got a wrong result and exited with status 3, which keeps the files)" \
	-- --steps 50 --count 64 --fault count:rank=3:step=2
live transport TRANSPORT_STALL "TRANSPORT_STALL: every rank started the op, none finished" \
	NCCLSIM_FAULT=stall:seq=3 -- --steps 50
live p2p P2P_UNMATCHED "P2P_UNMATCHED: a send or receive nobody matches" \
	-- --steps 50 --pipeline --fault p2p:rank=1:step=3
live p2p-deadlock P2P_DEADLOCK "P2P_DEADLOCK: every rank sends first, outside a group; each send waits for a receive queued behind the peer's own send" \
	PROGRAM="$scenario" -- --case p2p-cycle --count 4194304
live init INIT_STALL "INIT_STALL: ranks inside communicator init, one never came" \
	-- --steps 50 --fault noinit:rank=3
live stream STREAM_BLOCKED "STREAM_BLOCKED: two communicators used in a different order on one stream by one rank" \
	PROGRAM="$scenario" -- --case order2
live gpu-fault GPU_FAULT "GPU_FAULT: the GPU reported an error" \
	NCCLSIM_FAULT=gpufault:rank=2:seq=3 -- --steps 50
live idle IDLE "IDLE: communicators made, no collective ever (compiling, loading data); the stacks after \`ncclwatch dump\`" \
	-- --steps 50 --fault compile:rank=all
live healthy HEALTHY "HEALTHY" NCCLWATCH_KEEP=1 -- --steps 5
