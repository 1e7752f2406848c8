# joules-meterd reads PDUs over SNMP (net-snmp) and BMCs over IPMI (FreeIPMI).
joules_meterd_CFLAGS := $(shell pkg-config --cflags netsnmp 2>/dev/null || net-snmp-config --cflags)
joules_meterd_LDLIBS := $(shell pkg-config --libs netsnmp 2>/dev/null || net-snmp-config --libs) \
	$(shell pkg-config --libs libfreeipmi)
