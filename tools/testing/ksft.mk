# SPDX-License-Identifier: GPL-2.0
# The kernel's kselftest harness (kselftest_harness.h, kselftest.h), read
# at build time from the source package the debug kernel is built from
# (tools/testing/kbuild/debug.source, fetched without being installed by
# fetch-source.sh, cached) and never copied into the repository. Not
# linux-source-6.12's: its failed ASSERT longjmp()s back into the test's
# wrapper, where the forked process's own 'child' is not volatile, and
# with -O2 a FIXTURE_TEARDOWN is then skipped (unit/test_harness.c);
# newer harnesses run the teardown and abort() instead.
# Included by the Makefiles of the selftests, the host unit tests and the
# exporter's and meters' host tests: a rule that depends on $(KSFT_HDRS)
# gets them, and CFLAGS finds them (with check.h, the one macro joules
# adds). One extraction under the top's build/ serves them all: each is a
# scan of the whole tarball.
KSFT_SOURCE  := $(TOP)/tools/testing/kbuild/debug.source
KSFT_DIR     ?= $(TOP)/build/ksft
KSFT_HDRS    := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h
KSFT_CFLAGS  := -isystem $(KSFT_DIR)

# KSFT_TARBALL= names a tarball instead (its top directory is the
# package's name, as in every linux-source-X.Y).
$(KSFT_HDRS) &: $(KSFT_SOURCE)
	@set -e; read -r pkg ver suite < $(KSFT_SOURCE); \
	tarball="$(KSFT_TARBALL)"; \
	if [ -z "$$tarball" ]; then \
		got=$$($(TOP)/tools/testing/kbuild/fetch-source.sh $$pkg $$ver $$suite) || \
			{ echo "ksft.mk: no $$pkg for the kselftest harness (above)" >&2; exit 1; }; \
		tarball=$${got#* }; \
	fi; \
	mkdir -p $(KSFT_DIR); \
	echo "kselftest harness from $$tarball"; \
	tar -xJf "$$tarball" -C $(KSFT_DIR) --strip-components=4 \
		$$pkg/tools/testing/selftests/kselftest_harness.h \
		$$pkg/tools/testing/selftests/kselftest.h
	@touch $(KSFT_HDRS)

# The including Makefiles' default goal is their `all`, not this rule.
.DEFAULT_GOAL := all
