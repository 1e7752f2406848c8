# joules-bpf compiles in the libbpf skeleton of the bpf/ collector, which
# bpf/Makefile generates (clang, bpftool); without that toolchain the tool
# is left out with a warning instead of failing the whole user build.
JB_BPF_DIR := $(TOP)/bpf
JB_CLANG ?= clang
JB_HAVE_BPF := $(shell pkg-config --exists libbpf && command -v $(JB_CLANG) >/dev/null && \
	{ command -v bpftool || test -x /usr/sbin/bpftool; } >/dev/null && echo yes)
ifeq ($(JB_HAVE_BPF),yes)
joules_bpf_DEPS := $(JB_BPF_DIR)/build/joules.skel.h $(JB_BPF_DIR)/joules_bpf.h
joules_bpf_CFLAGS := -I$(JB_BPF_DIR)/build -I$(JB_BPF_DIR) $(shell pkg-config --cflags libbpf)
joules_bpf_LDLIBS := $(shell pkg-config --libs libbpf)
# This file is read before user/Makefile's `all`: keep that the default goal.
.DEFAULT_GOAL := all
# bpf/Makefile writes each output atomically, so this may run while a
# parallel `make bpf` builds the same files.
$(JB_BPF_DIR)/build/joules.skel.h: $(wildcard $(JB_BPF_DIR)/*.bpf.c $(JB_BPF_DIR)/*.h \
		$(JB_BPF_DIR)/*.sh) $(JB_BPF_DIR)/Makefile
	$(MAKE) -C $(JB_BPF_DIR) CLANG=$(JB_CLANG)
else
$(warning joules-bpf not built: it needs libbpf-dev, clang and bpftool)
TOOLS := $(filter-out joules-bpf,$(TOOLS))
endif
