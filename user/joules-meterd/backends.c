// SPDX-License-Identifier: GPL-2.0
/* The table of backends, one per kind of configuration section. */
#include <stdio.h>
#include <string.h>

#include "jmd.h"

static const struct {
	const char *type;
	const struct jmd_backend *be;
} jmd_backends[] = {
	{ "ipmi", &jmd_ipmi_backend },
	{ "snmp", &jmd_snmp_backend },
	{ "command", &jmd_command_backend },
	{ "virtio", &jmd_virtio_backend },
};

const struct jmd_backend *jmd_backend_find(const char *type, char *err,
					   size_t errlen)
{
	for (size_t i = 0; i < sizeof(jmd_backends) / sizeof(jmd_backends[0]);
	     i++) {
		if (!strcmp(type, jmd_backends[i].type))
			return jmd_backends[i].be;
	}
	snprintf(
		err, errlen,
		"unknown section type '%s' (want snmp, ipmi, command or virtio)",
		type);
	return NULL;
}
