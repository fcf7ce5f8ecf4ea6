# tests/gen: nwgen, the generator of synthetic segments (every scenario of
# tests/gen/nwgen.c's table, at any scale), and its tests
# (tests/gen/test-gen-*.sh).
#
#   $(BUILD)/tests/progs/nwgen   nwgen --scenario NAME --ranks N --out DIR

NWGEN      := $(BUILD)/tests/progs/nwgen
NWGEN_OBJS := $(addprefix $(BUILD)/tests/gen/,nwgen.o segbuild.o snapgen.o) $(BUILD)/interpose/comm_id.o

$(NWGEN): $(NWGEN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(NWGEN_OBJS)

TEST_BINS += $(NWGEN)
