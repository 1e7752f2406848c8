# SPDX-License-Identifier: GPL-2.0
#
# joules top-level build.
#   make               module + user tools (+ BPF where clang/bpftool exist)
#   make KVER=6.1.0-57-amd64 | KDIR=/path/to/build   pick the kernel
#   make check         host unit tests + selftests in QEMU-booted kernels (kernels.conf)
#   make checkstyle    checkpatch on kmod/, clang-format on user/ and tools/, commit subjects, function length
#   make demo          boot QEMU, load the module, run a workload, show energy
#   make bench         benchmarks (module, BPF collector, neither) in a QEMU-booted kernel
#   make soak SEEDS=20 the differential test, one boot per seed, on 6.12 and the debug kernel
#   make install       module (modules_install), tools, man pages, mount glue
#   make deb           Debian packages in build-deb/ (Documentation/packaging.rst)
#
# Kbuild (the file next to this one) lists the module objects; when kbuild
# runs in this directory it reads that file, not this one.

# Which kernel: KVER= (or KDIR=), else the running kernel when its headers
# are installed, else the first installed kernel of tools/testing/kernels.conf.
# The choice is printed; with several header packages installed nothing is
# picked silently. `make check` does not use it: it builds for every kernel
# of kernels.conf.
# (Not for goals that build no module: deb, version.)
ifeq ($(origin KDIR)$(origin KVER),undefinedundefined)
ifneq ($(if $(MAKECMDGOALS),$(filter-out deb version,$(MAKECMDGOALS)),all),)
PICKED := $(shell tools/testing/pick-kernel)
KVER := $(word 1,$(PICKED))
KDIR := $(word 2,$(PICKED))
ifneq ($(KVER),)
$(info joules: building for $(KVER): $(wordlist 3,100,$(PICKED)); KVER= to choose)
endif
endif
endif
KDIR ?= /lib/modules/$(KVER)/build
PREFIX ?= /usr/local
DESTDIR ?=
MAN_DIR ?= $(PREFIX)/share/man
# The version: JL_VERSION of kmod/core.h, its one home (dkms.conf, the
# tools' --version and the Debian packages all read it from there).
VERSION := $(shell sed -n 's/^\#define JL_VERSION "\(.*\)"$$/\1/p' kmod/core.h)
DEB_OUT ?= build-deb
# Build the test-only energy source module too (never installed).
TESTMOD_DIR := tools/testing/kmod

all: module user

check-kdir:
	@test -d "$(KDIR)" || { echo "joules: no kernel build tree at '$(KDIR)'; install linux-headers-<version> or pass KDIR=/KVER=" >&2; exit 1; }

module: check-kdir
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# The synthetic energy source used by the selftests (tools/testing/kmod/).
testmod: module
	@if [ -f $(TESTMOD_DIR)/Kbuild ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/$(TESTMOD_DIR) KBUILD_EXTRA_SYMBOLS=$(CURDIR)/Module.symvers modules; \
	fi

user:
	$(MAKE) -C user

bpf:
	@if [ -f bpf/Makefile ]; then $(MAKE) -C bpf KVER=$(KVER); fi

# Kernel-independent parts; run-tests builds the module for each kernel.
tests: user
	$(MAKE) -C tools/testing/unit
	$(MAKE) -C tools/testing/selftests
	$(MAKE) -C tools/testing/exporter
	$(MAKE) -C tools/testing/meters

# Every installed kernel of tools/testing/kernels.conf (KVER= or
# JOULES_KERNELS= narrows it).
check: tests bpf
	$(if $(filter command line environment,$(origin KVER)),KVER=$(KVER)) tools/testing/run-tests

# W=1, sparse and kmod/'s include graph (printed; no cycles) for KVER.
static-check: check-kdir
	tools/testing/static-check --kdir $(KDIR)

# Style kept by tools (tools/testing/checkstyle): checkpatch.pl --no-tree on
# kmod/ (less checkpatch.allow's idiom), clang-format on every C file of
# user/ and tools/, commit subjects since the last release tag v* or, while
# there is none, since CHECKSTYLE_BASE (the reformatting commit), and no
# function over 80 lines outside the tests. Any finding fails;
# JOULES_CHECKSTYLE_STRICT=0 only reports.
CHECKSTYLE_BASE ?= cded1f42a421005d3752c8622772a19612e80691
checkstyle:
	CHECKSTYLE_BASE=$(CHECKSTYLE_BASE) tools/testing/checkstyle

# METER=snmp: the node's energy from a simulated PDU through joules-meterd.
demo: module user
	KVER=$(KVER) METER=$(METER) tools/testing/demo

# Speed goals live here, never in `make check`: wall clock on 2 CPUs, then
# instruction counts on one (QEMU -icount). Takes about 40 minutes. The
# kernel booted is KVER's (or KDIR's), with joules.ko built for it in a
# scratch copy; joules-bpf (user, bpf) is measured next to it.
# KVER=build:bench: 7.2 built from source without the debug checkers (no
# BTF there, so no collector either).
bench: user $(if $(filter build:%,$(KVER)),,bpf)
	$(MAKE) -C tools/testing/bench
	KVER=$(KVER) KDIR=$(if $(filter build:%,$(KVER)),,$(KDIR)) tools/testing/bench/qemu-bench.sh

modules_install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install

install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	$(MAKE) -C user install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	install -D -m 0644 packaging/joules-modprobe.conf $(DESTDIR)/etc/modprobe.d/joules.conf
	install -D -m 0644 packaging/90-joules.rules $(DESTDIR)/etc/udev/rules.d/90-joules.rules
	install -D -m 0644 packaging/proc-energy.mount $(DESTDIR)/etc/systemd/system/proc-energy.mount
	for n in 1 4 8; do \
		install -d $(DESTDIR)$(MAN_DIR)/man$$n; \
		for m in Documentation/man/*.$$n; do [ -f "$$m" ] && install -m 0644 $$m $(DESTDIR)$(MAN_DIR)/man$$n/ || true; done; \
	done
	for u in joules-exporter joules-train-follow joules-meterd; do \
		sed 's,/usr/local/bin/,$(PREFIX)/bin/,' packaging/$$u.service > $$u.service.tmp && \
		install -D -m 0644 $$u.service.tmp $(DESTDIR)/lib/systemd/system/$$u.service && \
		rm -f $$u.service.tmp || exit 1; \
	done

clean:
	-[ -d "$(KDIR)" ] && $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-[ -d "$(KDIR)" ] && [ -f $(TESTMOD_DIR)/Kbuild ] && $(MAKE) -C $(KDIR) M=$(CURDIR)/$(TESTMOD_DIR) clean
	$(MAKE) -C user clean
	rm -rf build/checkstyle
	$(MAKE) -C tools/testing/unit clean
	-$(MAKE) -C tools/testing/selftests clean
	-$(MAKE) -C tools/testing/bench clean
	-[ -f bpf/Makefile ] && $(MAKE) -C bpf clean

.PHONY: all check-kdir module testmod user bpf tests check static-check checkstyle demo bench modules_install install clean

# The differential test (selftests/87-differential.c) over SEEDS seeds, one
# guest boot each, on 6.12 and the debug kernel (built if not cached).
SEEDS ?= 20
soak: user
	tools/testing/soak $(SEEDS)

.PHONY: soak

# Only the mount glue (for DKMS installs, where dkms installs the module).
install-glue:
	install -D -m 0644 packaging/joules-modprobe.conf $(DESTDIR)/etc/modprobe.d/joules.conf
	install -D -m 0644 packaging/90-joules.rules $(DESTDIR)/etc/udev/rules.d/90-joules.rules
	install -D -m 0644 packaging/proc-energy.mount $(DESTDIR)/etc/systemd/system/proc-energy.mount

.PHONY: install-glue

# Debian packages from a clean copy of the tree, into $(DEB_OUT)/.
deb:
	packaging/build-deb $(DEB_OUT)

version:
	@echo $(VERSION)

.PHONY: deb version
