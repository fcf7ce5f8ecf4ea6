# Helpers for the RAS tests (sourced after tests/lib.sh and
# tests/trainer/trainer-lib.sh): the trainer runs on the simulation WITHOUT
# the preload, and its simulated NCCL serves RAS like NCCL 2.28.9.
#
# Port: NCCL's default localhost:28028 would be shared by every test job
# running at the same time on this machine (SO_REUSEPORT lets them all bind
# it, and a query would land in any of them), so each test takes a free
# port of its own and exports NCCL_RAS_ADDR, which both the simulated NCCL
# and `ncclwatch ras` read.
RAS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export NCCL_RAS_ADDR="127.0.0.1:$RAS_PORT"
RAW="$NW_ROOT/tests/ras/ras_raw.py"

# raw MODE DATA: ras_raw.py against this test's port (see ras_raw.py).
raw() { python3 "$RAW" "$RAS_PORT" "$@"; }

# listeners: how many sockets listen on this test's RAS port now.
listeners() { ss -Hltn "sport = :$RAS_PORT" | wc -l; }

# ras_answers N: the RAS report lists N answering ranks in all (JSON).
ras_answers() { [ "$("$NW_CLI" ras --json 2>/dev/null | grep -c '^          "rank": ')" -ge "$1" ]; }
