# Shared by the simulated NCCL's test scripts: `. "$NW_ROOT/tests/sim/nccl/sim_nccl_test.sh"`
# after tests/lib.sh. Runs the C test programs (built to $NW_BUILD/sim-tests)
# on the simulation, each bounded in time, its output kept in $T.
nw_use_sim
SCEN="$NW_BUILD/sim-tests/nccl-scenarios"
COLLS="$NW_BUILD/sim-tests/nccl-colls"
[ -x "$SCEN" ] && [ -x "$COLLS" ] || fail "test programs missing: run make first"

# run_ok NAME SECS CMD...: CMD must exit 0 within SECS and print PASS.
run_ok() {
	_name=$1 _secs=$2; shift 2
	note "$_name"
	nw_bounded "$_secs" "$@" > "$T/$_name.out" 2>&1
	_rc=$?
	if [ $_rc -ne 0 ] || ! grep -q '^PASS' "$T/$_name.out"; then
		sed 's/^/    /' "$T/$_name.out" | tail -n 30 >&2
		fail "$_name: exit status $_rc"
	fi
	if grep -Eq 'ThreadSanitizer|AddressSanitizer|LeakSanitizer|runtime error:' "$T/$_name.out"; then
		grep -E -A 12 'Sanitizer|runtime error:' "$T/$_name.out" | head -n 40 >&2
		fail "$_name: sanitizer report"
	fi
}

# comm_files: how many communicator files the simulation has in NCCLSIM_DIR.
comm_files() { find "$NCCLSIM_DIR" -name 'comm-*' | wc -l; }
