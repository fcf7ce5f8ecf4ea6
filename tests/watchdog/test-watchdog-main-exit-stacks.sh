#!/bin/sh
# What a process says about itself does not depend on its main thread
# being alive. A process whose main thread called pthread_exit goes on in
# its other threads; /proc/self/maps, /proc/self/exe and
# process_vm_readv(getpid()) answer only through the main thread (an
# empty map, ENOENT, ESRCH once it has exited), so the stacks of such a
# process were a single frame, unnamed, with no Python frames, and the CLI
# called it dead. Now the capture core and the Python reader reach the
# process through the capturing thread, the exited main thread is not
# listed, and the reader finds a live thread.
#  - nccl-main-exit initstall: main exits, then a worker stalls in
#    ncclCommInitRank (rank 0 of 2, no rank 1). The watchdog's dump holds
#    the worker's whole stack, named (init_worker, a static function of the
#    program, named from its ELF symbol table), the program's path, and no
#    entry for the exited main thread; `ncclwatch status` says alive.
#  - py_fork_child.py stall: a Python fork child whose main thread ends
#    while its thread "stuck" is inside ncclCommInitRank: its Python
#    frames are in the dump.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

note "C: main exited, a worker stuck in ncclCommInitRank"
nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=cstall "$NW_PROGS/nccl-main-exit" initstall 0 > "$T/c.out" 2>&1
pid=$NW_PID
wait_for_count $WD_WAIT 1 'ncclwatch: stall: ' "$T/c.out"
cat "$T/c.out"
line=$(stall_lines "$T/c.out")
echo "$line" | grep -Eq " pid=$pid op=CommInit .* state=INIT_ENTERED .*: thread [0-9]+ is inside the call; dump: " \
	|| fail "not the expected finding: $line"
tid=$(echo "$line" | sed -nE 's/.*: thread ([0-9]+) is inside the call;.*/\1/p')
"$NW_CLI" status "$NCCLWATCH_DIR/cstall" > "$T/c.status" || fail "status failed"
cat "$T/c.status"
assert_grep "^[^ ]+ $pid .* alive\$" "$T/c.status"
show "$(dump_of "$line")" > "$T/c.dump"
assert_grep '^  module 0 0x[0-9a-f]+ /.*/nccl-main-exit$' "$T/c.dump"
assert_no_grep "^  thread $pid " "$T/c.dump"
main_stack "$T/c.dump" "$tid" > "$T/c.stack"
cat "$T/c.stack"
assert_grep ' ncclCommInitRank\+0x' "$T/c.stack"
assert_grep ' init_worker\+0x[0-9a-f]+ \(nccl-main-exit\+0x' "$T/c.stack"
kill -KILL "$pid"

note "Python: a fork child's main thread ended, its thread 'stuck' in ncclCommInitRank"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 (Debian: python3)"
nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=pystall /usr/bin/python3 \
	"$NW_ROOT/tests/watchdog/py_fork_child.py" stall > "$T/py.out" 2>&1
wait_for_count $WD_WAIT 1 'ncclwatch: stall: ' "$T/py.out"
assert_grep 'child main gone' "$T/py.out"
line=$(stall_lines "$T/py.out")
show "$(dump_of "$line")" > "$T/py.dump"
sed -n '/^stacks /,$p' "$T/py.dump"
assert_grep '^    python "stuck" frames=[0-9]+ ' "$T/py.dump"
assert_grep '^    py#0 stuck_in_init \(.*/py_fork_child\.py:[0-9]+\)$' "$T/py.dump"
echo ok
