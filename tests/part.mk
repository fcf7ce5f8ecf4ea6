# tests: programs of the test folders that no part's fragment builds.
include tests/compat/part.mk
include tests/watchdog/part.mk
include tests/capture/part.mk
include tests/hangs/part.mk
