#!/bin/sh
# The example scripts without a launcher: examples/slurm.sbatch,
# examples/collect/collect-srun.sh and examples/jax_train.py parse
# (no Slurm, JAX or GPU here); torchrun.sh and
# mpirun.sh (run for real by test-launch-torchrun.sh and
# test-launch-mpirun.sh) print their header for --help, refuse a command
# line without "--" or a missing library (exit 2), and hand the launcher
# (a stand-in that prints what it got) the right words and environment:
# our options out, the launcher's kept in order, CMD last; LD_PRELOAD with
# the library first, or kept when it names it; NCCLWATCH_TIMEOUT and a
# per-run NCCLWATCH_DUMP_DIR default; torchrun: --no_python for a program,
# not for a *.py, --redirects/--tee unless given; mpirun: -x LD_PRELOAD=...
# and -x for every NCCLWATCH_* set; the library found beside the script
# (../build/lib) when NCCLWATCH_LIB is unset.
. "$NW_ROOT/tests/lib.sh"
ex="$NW_ROOT/examples"
unset LD_PRELOAD NCCLWATCH_TIMEOUT NCCLWATCH_DUMP_DIR NCCLWATCH_KEEP NCCLWATCH_JOB NCCLWATCH_LIB

note "syntax of the scripts that cannot run here"
sh -n "$ex/slurm.sbatch" || fail "examples/slurm.sbatch: sh -n"
sh -n "$ex/torchrun.sh" || fail "examples/torchrun.sh: sh -n"
sh -n "$ex/mpirun.sh" || fail "examples/mpirun.sh: sh -n"
PYTHONPYCACHEPREFIX="$T/pycache" python3 -m py_compile "$ex/jax_train.py" || fail "examples/jax_train.py does not compile"
sh -n "$ex/collect/collect-srun.sh" || fail "examples/collect/collect-srun.sh: sh -n"
for f in slurm.sbatch jax_train.py collect/collect-srun.sh; do
	grep -q 'UNTESTED HERE' "$ex/$f" || fail "$f does not say it is untested here"
done

# A stand-in launcher: its arguments one a line, then the variables.
fake="$T/fake-launcher"
cat > "$fake" <<'EOF'
#!/bin/sh
for a in "$@"; do echo "arg $a"; done
echo "LD_PRELOAD=${LD_PRELOAD-unset}"
env | grep '^NCCLWATCH_' | sort
EOF
chmod +x "$fake"
export TORCHRUN="$fake" MPIRUN="$fake"
lib=$(realpath "$NW_LIB")
work="$T/work"; mkdir -p "$work"
# run SCRIPT ARGS...: the script from $work, its output in $T/got.
run() { (cd "$work" && NCCLWATCH_LIB="$lib" "$@") > "$T/got" 2> "$T/got.err"; }
args() { sed -n 's/^arg //p' "$T/got" | tr '\n' ' '; }

for s in torchrun mpirun; do
	note "$s.sh: --help, usage errors"
	"$ex/$s.sh" --help > "$T/help" 2>&1 || fail "$s.sh --help failed"
	assert_grep "^usage: $s.sh \[" "$T/help"
	assert_grep '^What to adapt' "$T/help"
	run "$ex/$s.sh" --timeout 3 /bin/true
	assert_eq $? 2 "$s.sh without --: exit status"
	assert_grep '^usage: ' "$T/got.err"
	run "$ex/$s.sh" --
	assert_eq $? 2 "$s.sh without a command: exit status"
	(cd "$work" && NCCLWATCH_LIB="$T/none/libncclwatch.so" "$ex/$s.sh" -- /bin/true) 2> "$T/nolib.err"
	assert_eq $? 2 "$s.sh with a missing library: exit status"
	assert_grep 'libncclwatch.so not found' "$T/nolib.err"
done

note "torchrun.sh: a program"
run "$ex/torchrun.sh" --nproc 4 --master_port 1234 --timeout 7 --rdzv_id x -- /bin/prog -a --timeout 9 -- z
assert_eq $? 0 "torchrun.sh's status (the stand-in's)"
assert_eq "$(args)" "--nproc_per_node 4 --redirects 1 --tee 1 --no_python --master_port 1234 --rdzv_id x /bin/prog -a --timeout 9 -- z " "torchrun's words"
assert_grep "^LD_PRELOAD=$lib\$" "$T/got"
assert_grep '^NCCLWATCH_TIMEOUT=7$' "$T/got"
assert_grep "^NCCLWATCH_DUMP_DIR=$work/ncclwatch/[0-9]{8}-[0-9]{6}-[0-9]+\$" "$T/got"
assert_grep "^torchrun.sh: NCCLWATCH_TIMEOUT=7 NCCLWATCH_DUMP_DIR=$work/ncclwatch/" "$T/got.err"
note "torchrun.sh: a *.py, --tee given, LD_PRELOAD already set; a module (-m)"
LD_PRELOAD=/other.so NCCLWATCH_TIMEOUT=5 NCCLWATCH_DUMP_DIR=/d run "$ex/torchrun.sh" --tee 3 -- train.py --lr 1
assert_eq "$(args)" "--nproc_per_node auto --tee 3 train.py --lr 1 " "torchrun's words for a script"
assert_grep "^LD_PRELOAD=$lib:/other.so\$" "$T/got"
assert_grep '^NCCLWATCH_TIMEOUT=5$' "$T/got"
assert_grep '^NCCLWATCH_DUMP_DIR=/d$' "$T/got"
LD_PRELOAD="/san.so:$lib" run "$ex/torchrun.sh" --dump-dir=/e -m -- pkg.mod
assert_eq "$(args)" "--nproc_per_node auto --redirects 1 --tee 1 -m pkg.mod " "torchrun's words for -m"
assert_grep "^LD_PRELOAD=/san.so:$lib\$" "$T/got"
assert_grep '^NCCLWATCH_DUMP_DIR=/e$' "$T/got"

note "mpirun.sh"
NCCLWATCH_KEEP=1 NCCLWATCH_JOB=j run "$ex/mpirun.sh" --np 8 --hostfile h --timeout 4 -- ./prog -x y
assert_eq $? 0 "mpirun.sh's status (the stand-in's)"
root=""; [ "$(id -u)" != 0 ] || root="--allow-run-as-root "
assert_eq "$(args)" "${root}-np 8 -x LD_PRELOAD=$lib -x NCCLWATCH_DIR -x NCCLWATCH_DUMP_DIR -x NCCLWATCH_JOB -x NCCLWATCH_KEEP -x NCCLWATCH_LIB -x NCCLWATCH_TIMEOUT --hostfile h ./prog -x y " "mpirun's words"
assert_grep '^LD_PRELOAD=unset$' "$T/got"
assert_grep '^NCCLWATCH_TIMEOUT=4$' "$T/got"
assert_grep "^NCCLWATCH_DUMP_DIR=$work/ncclwatch/" "$T/got"

note "the library beside the script: ../build/lib"
mkdir -p "$T/tree/examples" "$T/tree/build/lib"
cp "$ex/torchrun.sh" "$ex/mpirun.sh" "$T/tree/examples/"
: > "$T/tree/build/lib/libncclwatch.so"
for s in torchrun mpirun; do
	(cd "$work" && "$T/tree/examples/$s.sh" -- /bin/prog) > "$T/got" 2>/dev/null || fail "$s.sh from a build tree"
	case $s in
	torchrun) assert_grep "^LD_PRELOAD=$T/tree/examples/../build/lib/libncclwatch.so\$" "$T/got" ;;
	mpirun) assert_grep "^arg LD_PRELOAD=$T/tree/examples/../build/lib/libncclwatch.so\$" "$T/got" ;;
	esac
done
