# SPDX-License-Identifier: GPL-2.0
# The kernel's kselftest harness (kselftest_harness.h, kselftest.h), read
# from the installed linux-source-6.12 package at build time and never
# copied into the repository. Included by the Makefiles of the selftests,
# the host unit tests and the exporter's host tests: a rule that depends on
# $(KSFT_HDRS) gets them, and CFLAGS finds them (with check.h, the one
# macro joules adds). One extraction under the top's build/ serves them all:
# each is a scan of the whole tarball.
KSFT_TARBALL ?= /usr/src/linux-source-6.12.tar.xz
KSFT_DIR     ?= $(TOP)/build/ksft
KSFT_HDRS    := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h
KSFT_CFLAGS  := -isystem $(KSFT_DIR)

$(KSFT_HDRS) &:
	@test -r $(KSFT_TARBALL) || { echo "$(KSFT_TARBALL) missing (apt-get install linux-source-6.12)" >&2; exit 1; }
	@mkdir -p $(KSFT_DIR)
	tar -xJf $(KSFT_TARBALL) -C $(KSFT_DIR) --strip-components=4 \
		linux-source-6.12/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.12/tools/testing/selftests/kselftest.h
	@touch $(KSFT_HDRS)

# The including Makefiles' default goal is their `all`, not this rule.
.DEFAULT_GOAL := all
