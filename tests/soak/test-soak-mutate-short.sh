#!/bin/sh
# The short version of soak-mutate.sh for make test: 4 rounds of mutated
# segment directories through diagnose, status and show.
NW_MUTATE_ROUNDS=4 NW_SOAK_ROUNDS=1 exec sh "$NW_ROOT/tests/soak/soak-mutate.sh"
