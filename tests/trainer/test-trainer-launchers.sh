#!/bin/sh
# The trainer started as a launcher would start it: each rank a separate
# process with torchrun's, mpirun's or srun's variables and a shared
# --rendezvous directory; plus a lone process (rank 0 of 1), --help and
# bad command lines.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

# run_ranks NAME N RANKVAR SIZEVAR LOCALVAR: N processes, waited for.
run_ranks() {
	name=$1 n=$2 rankvar=$3 sizevar=$4 localvar=$5
	pids=""
	r=0
	while [ $r -lt "$n" ]; do
		env "$rankvar=$r" "$sizevar=$n" "$localvar=$r" \
			"$NW_TRAINER" --steps 7 --count 33 --bcast-every 3 --pipeline \
			--rendezvous "$T/rdv-$name" > "$T/$name.$r.out" 2>&1 &
		pids="$pids $!"
		_nw_pgids="$_nw_pgids $!"
		r=$((r + 1))
	done
	r=0
	for p in $pids; do
		nw_wait "$p" 120 || { cat "$T/$name.$r.out"; fail "$name rank $r failed"; }
		assert_grep "rank $r: world size $n \(launcher $name\)" "$T/$name.$r.out"
		assert_grep "rank $r ok steps=7 allreduce=7 broadcast=3 sendrecv=7\$" "$T/$name.$r.out"
		r=$((r + 1))
	done
	[ ! -e "$T/rdv-$name/ncclUniqueId" ] || fail "rank 0 left the unique id behind"
}

note "torchrun-style, 4 ranks"
run_ranks torchrun 4 RANK WORLD_SIZE LOCAL_RANK
note "mpirun-style, 2 ranks"
run_ranks mpirun 2 OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_LOCAL_RANK
note "srun-style, 4 ranks"
run_ranks srun 4 SLURM_PROCID SLURM_NTASKS SLURM_LOCALID

note "torchrun-style, 2 ranks, default rendezvous directory (keyed by the launcher's pid)"
RANK=0 WORLD_SIZE=2 "$NW_TRAINER" --steps 3 > "$T/def.0.out" 2>&1 &
p0=$!; _nw_pgids="$_nw_pgids $p0"
RANK=1 WORLD_SIZE=2 "$NW_TRAINER" --steps 3 > "$T/def.1.out" 2>&1 &
p1=$!; _nw_pgids="$_nw_pgids $p1"
nw_wait "$p0" 120 || { cat "$T/def.0.out"; fail "rank 0 failed"; }
nw_wait "$p1" 120 || { cat "$T/def.1.out"; fail "rank 1 failed"; }
assert_grep 'rank 0 ok steps=3 ' "$T/def.0.out"
assert_grep 'rank 1 ok steps=3 ' "$T/def.1.out"
assert_eq "$(find "$NCCLSIM_DIR" -name 'trainer-rendezvous-*')" "" "leftover rendezvous directory"

note "a lone process is rank 0 of 1"
trainer_run 60 "$T/lone.out" --steps 3 --pipeline
assert_eq "$TRAINER_STATUS" 0 "lone exit status"
assert_grep 'rank 0: world size 1 \(launcher none\)' "$T/lone.out"
assert_grep 'rank 0 ok steps=3 allreduce=3 broadcast=1 sendrecv=3$' "$T/lone.out"

note "--help and bad command lines"
"$NW_TRAINER" --help > "$T/help.out" 2>&1 || fail "--help failed"
for kind in skip count dtype order sleep p2p noinit crash exit compile; do
	assert_grep "^      $kind " "$T/help.out"
done
for bad in "--steps x" "--fault bogus:rank=1:step=2" "--fault skip:step=2" "--fault sleep:rank=0:step=1" \
           "--nranks 2 --fault crash:rank=2:step=1" "--count 0" "extra"; do
	# shellcheck disable=SC2086
	"$NW_TRAINER" $bad > "$T/bad.out" 2>&1
	assert_eq "$?" 2 "exit status of: trainer $bad"
	assert_grep 'trainer: ' "$T/bad.out"
done
RANK=3 WORLD_SIZE=2 "$NW_TRAINER" > "$T/bad.out" 2>&1
assert_eq "$?" 2 "exit status with RANK=3 WORLD_SIZE=2"
assert_grep 'do not make a rank' "$T/bad.out"
