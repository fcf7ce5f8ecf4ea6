# tests/cli: the CLI's tests (tests/cli/test-cli-*.sh) and the renderers'
# unit test:
#   $(BUILD)/tests/test-cli-render   the renderers on an analysis filled by
#     hand (tests/cli/test_render.c): pins the text and status formats,
#     parses the JSON and the trace back; with --json/--trace FILE it writes
#     that output for test-cli-schema.sh.
RENDER_TEST      := $(BUILD)/tests/test-cli-render
RENDER_TEST_OBJS := $(BUILD)/tests/cli/test_render.o

$(RENDER_TEST): $(RENDER_TEST_OBJS) $$(REPORT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(RENDER_TEST_OBJS) $(REPORT_LIB) $(JSON_LIBS)

TEST_BINS += $(RENDER_TEST)
