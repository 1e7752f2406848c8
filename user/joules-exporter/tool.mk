# joules-exporter serves HTTP with libmicrohttpd; without its headers the
# tool is left out with a warning instead of failing the whole user build.
JE_HAVE_MHD := $(shell pkg-config --exists libmicrohttpd && echo yes)
ifeq ($(JE_HAVE_MHD),yes)
joules_exporter_CFLAGS := $(shell pkg-config --cflags libmicrohttpd)
joules_exporter_LDLIBS := $(shell pkg-config --libs libmicrohttpd) -lpthread
joules_exporter_DEPS := $(TOP)/kmod/uapi/joules_netlink.h
else
$(warning joules-exporter not built: it needs libmicrohttpd-dev)
TOOLS := $(filter-out joules-exporter,$(TOOLS))
endif
