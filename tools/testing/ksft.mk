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
KSFT_PKG     := $(word 1,$(shell cat $(KSFT_SOURCE)))
# Named after the package: headers of another one (an older checkout's
# linux-source-6.12) are never taken for these.
KSFT_DIR     ?= $(TOP)/build/ksft-$(KSFT_PKG)
KSFT_HDRS    := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h
KSFT_CFLAGS  := -isystem $(KSFT_DIR)

# Extracted beside and renamed into place, so that a make in another
# directory (the selftests', the exporter's) never compiles a half-written
# header.
$(KSFT_HDRS) &: $(KSFT_SOURCE)
	@set -e; read -r pkg ver suite < $(KSFT_SOURCE); \
	got=$$($(TOP)/tools/testing/kbuild/fetch-source.sh $$pkg $$ver $$suite) || \
		{ echo "ksft.mk: no $$pkg for the kselftest harness (above)" >&2; exit 1; }; \
	mkdir -p $(KSFT_DIR); tmp=$$(mktemp -d $(KSFT_DIR)/.x.XXXXXX); \
	echo "kselftest harness from $${got#* }"; \
	tar -xJf "$${got#* }" -C $$tmp --strip-components=4 \
		$$pkg/tools/testing/selftests/kselftest_harness.h \
		$$pkg/tools/testing/selftests/kselftest.h || { rm -rf $$tmp; exit 1; }; \
	mv -f $$tmp/kselftest_harness.h $$tmp/kselftest.h $(KSFT_DIR)/; rmdir $$tmp
	@touch $(KSFT_HDRS)

# The including Makefiles' default goal is their `all`, not this rule.
.DEFAULT_GOAL := all
