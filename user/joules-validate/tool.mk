# joules-validate speaks the module's netlink ABI: rebuild when it changes.
joules_validate_DEPS := $(TOP)/kmod/uapi/joules_netlink.h
