# joulesctl speaks the module's netlink ABI: rebuild when it changes.
joulesctl_DEPS := $(TOP)/kmod/uapi/joules_netlink.h
