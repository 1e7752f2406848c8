// SPDX-License-Identifier: GPL-2.0
/*
 * The table of backends, one per kind of configuration section. A backend
 * left out of the build (ipmi.c until FreeIPMI's is merged, say) is a weak
 * reference that stays NULL: its sections are refused with "not built in"
 * instead of the whole tool failing to link.
 */
#include <stdio.h>
#include <string.h>

#include "jmd.h"

extern const struct jmd_backend jmd_ipmi_backend __attribute__((weak));
extern const struct jmd_backend jmd_snmp_backend __attribute__((weak));
extern const struct jmd_backend jmd_command_backend __attribute__((weak));

static const struct {
	const char *type;
	const struct jmd_backend *be;
} jmd_backends[] = {
	{ "ipmi", &jmd_ipmi_backend },
	{ "snmp", &jmd_snmp_backend },
	{ "command", &jmd_command_backend },
};

const struct jmd_backend *jmd_backend_find(const char *type, char *err,
					   size_t errlen)
{
	for (size_t i = 0; i < sizeof(jmd_backends) / sizeof(jmd_backends[0]);
	     i++) {
		if (strcmp(type, jmd_backends[i].type))
			continue;
		if (!jmd_backends[i].be) {
			snprintf(err, errlen, "%s: not built in", type);
			return NULL;
		}
		return jmd_backends[i].be;
	}
	snprintf(err, errlen,
		 "unknown section type '%s' (want snmp, ipmi or command)",
		 type);
	return NULL;
}
