# tests/analysis: the analysis engine's tests (tests/analysis/test-analysis-*.sh)
# and their driver:
#   $(BUILD)/tests/progs/analyze        nw_analyze on paths, the result in a
#                                       plain grep-stable form (analyze.c)
#   $(BUILD)/tests/test-analysis-unit   rank sets, the wait-for graph and
#                                       edge cases of the engine (test_analysis.c)
ANALYZE_DRIVER     := $(BUILD)/tests/progs/analyze
ANALYSIS_UNIT_TEST := $(BUILD)/tests/test-analysis-unit

$(ANALYZE_DRIVER): $(BUILD)/tests/analysis/analyze.o $$(REPORT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/tests/analysis/analyze.o $(REPORT_LIB) $(JSON_LIBS)

# The unit test builds its segments with tests/gen's segbuild.
$(ANALYSIS_UNIT_TEST): $(BUILD)/tests/analysis/test_analysis.o $(BUILD)/tests/gen/segbuild.o $(BUILD)/interpose/comm_id.o $$(REPORT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/tests/analysis/test_analysis.o $(BUILD)/tests/gen/segbuild.o \
		$(BUILD)/interpose/comm_id.o \
		$(REPORT_LIB) $(JSON_LIBS)

TEST_BINS += $(ANALYZE_DRIVER) $(ANALYSIS_UNIT_TEST)
