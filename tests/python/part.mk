# tests/python: py-churn (Python stacks taken while threads come and go),
# built only where Debian's libpython3.11 is installed (its test skips
# otherwise).
PY_CHURN_LIBPYTHON := $(wildcard /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0)
ifneq ($(PY_CHURN_LIBPYTHON),)
PY_CHURN := $(BUILD)/tests/progs/py-churn
TEST_BINS += $(PY_CHURN)

$(PY_CHURN): $(BUILD)/tests/python/py_churn.o $$(PYSTACK_OBJS) $(BUILD)/watchdog/symbolize.o \
		$(BUILD)/interpose/log.o $(BUILD)/interpose/thread.o $(BUILD)/interpose/libc_dl.o $(BUILD)/interpose/hooks.o $$(UNW_TABLE_LINKED_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(PY_CHURN_LIBPYTHON) $(CAPTURE_LIBS) -ldl -pthread -lm
endif

# py-layout-table: the layout tables pystack carries (3.11, 3.12), printed
# for tests/python/test-py-layout.sh to hold against CPython's headers.
PY_LAYOUT_TABLE := $(BUILD)/tests/py-layout-table
TEST_BINS += $(PY_LAYOUT_TABLE)

$(PY_LAYOUT_TABLE): $(BUILD)/tests/python/py_layout_table.o $$(PYSTACK_OBJS) $(BUILD)/watchdog/symbolize.o \
		$(BUILD)/interpose/log.o $(BUILD)/interpose/thread.o $(BUILD)/interpose/libc_dl.o $(BUILD)/interpose/hooks.o $$(UNW_TABLE_LINKED_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CAPTURE_LIBS) -ldl -pthread -lm
