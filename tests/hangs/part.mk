# tests/hangs: small multi-process NCCL programs that hang the way real jobs
# do (tests/hangs/test-hang-*.sh run them under the preload on the
# simulation and assert the verdict). One .c per program (hang_NAME.c gives
# hang-NAME with '_' as '-'), sharing hang.h; built into
# $(BUILD)/tests/hangs/, linked against the simulated NCCL's and CUDA
# driver's sonames only (LD_LIBRARY_PATH picks them at run time).
HANG_NAMES := $(patsubst tests/hangs/hang_%.c,%,$(wildcard tests/hangs/hang_*.c))
HANG_PROGS := $(foreach n,$(HANG_NAMES),$(BUILD)/tests/hangs/hang-$(subst _,-,$(n)))
TEST_BINS += $(HANG_PROGS)

define hang_prog
$(BUILD)/tests/hangs/hang-$(subst _,-,$(1)): tests/hangs/hang_$(1).c tests/hangs/hang.h | $$(SIM_SONAMES)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CPPFLAGS) $$(CFLAGS) $$(LDFLAGS) -o $$@ $$< $$(SIM_LINK)
endef
$(foreach n,$(HANG_NAMES),$(eval $(call hang_prog,$(n))))
